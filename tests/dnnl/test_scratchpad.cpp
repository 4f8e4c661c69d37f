// The context's scratchpad: the one scratch buffer of a thread that every matmul executes with,
// instead of a scratchpad of its own held by each cached primitive.
#include <cstdint>
#include <thread>

#include <catch2/catch.hpp>

#include "core/rng.h"
#include "dnnl/context.h"
#include "ops/gemm.h"

using namespace attn;

namespace {

dnnl::memory::desc bytes_desc(int64_t bytes) {
  return dnnl::memory::desc({bytes}, dnnl::memory::data_type::u8, dnnl::memory::format_tag::a);
}

void* handle(const dnnl::memory& memory) { return memory.get_data_handle(); }

Tensor random_matrix(int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> values(size_t(rows * cols));
  for (float& value : values) value = 2.f * rng.uniform() - 1.f;
  return Tensor::from_vector({rows, cols}, values);
}

std::vector<float> product(const Tensor& a, const Tensor& b) {
  Tensor c = Tensor::zeros({a.dim(0), b.dim(1)});
  ops::gemm(ops::MatrixView::of(a), ops::MatrixView::of(b), ops::MatrixView::of(c), ops::GemmOptions::overwrite());
  return c.to_vector();
}

}  // namespace

TEST_CASE("context scratchpad: one buffer a thread - grown to the largest request and reused", "[dnnl]") {
  auto& context = dnn::Context::get();
  const dnnl::memory first = context.scratchpad(bytes_desc(1000));
  CHECK(reinterpret_cast<uintptr_t>(handle(first)) % 64 == 0);
  CHECK(context.scratchpad_bytes() >= 1000);
  const size_t grown = context.scratchpad_bytes() + 4096;
  const dnnl::memory large = context.scratchpad(bytes_desc(int64_t(grown)));
  CHECK(context.scratchpad_bytes() >= grown);
  CHECK(handle(context.scratchpad(bytes_desc(10))) == handle(large));  // a smaller request reuses it
  CHECK(context.scratchpad(bytes_desc(10)).get_desc().get_size() == 10);
  void* other_thread = nullptr;
  std::thread([&] { other_thread = handle(context.scratchpad(bytes_desc(10))); }).join();
  CHECK(other_thread != handle(large));
}

TEST_CASE("matmuls take their scratch space from the context - and share it without a trace", "[dnnl][ops][matmul]") {
  // (512 x 256) x (256 x 1024) in f32 needs scratch space in oneDNN 2.6's AVX2 and AVX-512
  // kernels; made in library mode it would hold its own, and the context's would not grow.
  const Tensor a = random_matrix(512, 256, 1), b = random_matrix(256, 1024, 2);
  const Tensor other_a = random_matrix(200, 256, 3), other_b = random_matrix(256, 768, 4);
  std::vector<float> before, after;
  size_t bytes_before = 1, bytes_after = 0;
  std::thread fresh([&] {  // a fresh thread: its scratchpad starts empty
    bytes_before = dnn::Context::get().scratchpad_bytes();
    before = product(a, b);
    bytes_after = dnn::Context::get().scratchpad_bytes();
    product(other_a, other_b);  // another shape writes the same scratch space in between
    after = product(a, b);
  });
  fresh.join();
  CHECK(bytes_before == 0);
  CHECK(bytes_after > 0);
  CHECK(after == before);
}
