#include <catch2/catch.hpp>

#include "core/buffer_pool.h"
#include "core/tensor.h"

using attn::Tensor;

TEST_CASE("grad_only shares the gradient and shape and requires_grad but not the values", "[core][tensor]") {
  Tensor x = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  x.set_requires_grad(true);
  Tensor handle = x.grad_only();
  CHECK(handle.shape() == x.shape());
  CHECK(handle.requires_grad());
  CHECK_FALSE(handle.has_values());
  CHECK_THROWS_WITH(handle.data(), Catch::Contains("gradient only"));
  handle.grad().fill(2.f);  // first use allocates the shared slot
  CHECK(x.has_grad());
  CHECK(x.grad().to_vector() == std::vector<float>(6, 2.f));
  CHECK_FALSE(handle.same_storage(x.grad_only()));
}

TEST_CASE("a grad_only handle holds no values: they are freed with the last full handle", "[core][tensor]") {
  auto& pool = attn::BufferPool::instance();
  const size_t bytes = 1 << 20;
  Tensor handle;
  size_t live_with_values = 0;
  {
    Tensor x = Tensor::empty({int64_t(bytes / sizeof(float))});
    handle = x.grad_only();
    live_with_values = pool.stats().live_bytes;
  }
  CHECK(pool.stats().live_bytes + bytes <= live_with_values);
  // The gradient still has its length: the values' buffer, in elements.
  CHECK(handle.grad().numel() == int64_t(bytes / sizeof(float)));
}

TEST_CASE("grad_to_write: fresh only for an untouched gradient that the tensor spans whole", "[core][tensor]") {
  Tensor x = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  x.set_requires_grad(true);
  // A part of the buffer (a view at an offset, or a shorter one) may share its gradient with
  // other parts: it must add, even before anything was written.
  Tensor whole_view = x.view({3, 2});
  bool fresh = true;
  SECTION("the whole tensor, untouched: fresh, and what the writer puts there is the gradient") {
    Tensor grad = whole_view.grad_to_write(&fresh);
    CHECK(fresh);
    grad.fill(4.f);  // the caller's contract: overwrite every element
    CHECK(x.grad().to_vector() == std::vector<float>(6, 4.f));
    x.grad_to_write(&fresh);  // now touched
    CHECK_FALSE(fresh);
  }
  SECTION("touched by grad() first: not fresh, and the zeros are kept") {
    x.grad();
    Tensor grad = x.grad_to_write(&fresh);
    CHECK_FALSE(fresh);
    CHECK(grad.to_vector() == std::vector<float>(6, 0.f));
  }
  SECTION("a grad_only handle of the whole tensor counts as the whole") {
    x.grad_only().grad_to_write(&fresh);
    CHECK(fresh);
  }
}

TEST_CASE("grad_to_write on a slice of a larger buffer adds to zeros", "[core][tensor]") {
  auto buffer = std::make_shared<attn::Buffer>(8 * sizeof(float), true);
  auto slot = std::make_shared<attn::GradSlot>();
  Tensor tail = Tensor::view_of(buffer, slot, 4, {4});
  bool fresh = true;
  Tensor grad = tail.grad_to_write(&fresh);
  CHECK_FALSE(fresh);
  CHECK(grad.to_vector() == std::vector<float>(4, 0.f));
}
