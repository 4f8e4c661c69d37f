#include <catch2/catch.hpp>

#include "core/dtype.h"
#include "grad_check.h"
#include "ops/add.h"
#include "ops/heads.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

// Small heads move in attn's loop of copies, large ones (over 65,536 elements) in a oneDNN
// reorder: both must place every element alike.
struct HeadsCase {
  int64_t batch, length, heads, head_width;  // B, T, H, Dh
};
const HeadsCase kHeadsCases[] = {{2, 3, 2, 3}, {4, 40, 4, 128}};

TEST_CASE("split_heads places x(b t h*Dh+e) at y(b h t e) - merge_heads puts it back", "[ops][heads]") {
  for (const HeadsCase& c : kHeadsCases) {
    DYNAMIC_SECTION("B" << c.batch << " T" << c.length << " H" << c.heads << " Dh" << c.head_width) {
      Tape tape;
      const int64_t B = c.batch, T = c.length, H = c.heads, Dh = c.head_width, D = H * Dh;
      Tensor x = random_tensor({B, T, D}, 1, 1.f, false);
      Tensor y = ops::split_heads(tape, x, H);
      REQUIRE(y.shape() == Shape{B, H, T, Dh});
      auto in = x.to_vector();
      auto out = y.to_vector();
      int64_t misplaced = 0;
      for (int64_t b = 0; b < B; ++b)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t t = 0; t < T; ++t)
            for (int64_t e = 0; e < Dh; ++e)
              misplaced += out[((b * H + h) * T + t) * Dh + e] != in[(b * T + t) * D + h * Dh + e];
      CHECK(misplaced == 0);
      Tensor merged = ops::merge_heads(tape, y);
      REQUIRE(merged.shape() == x.shape());
      CHECK(merged.to_vector() == in);
    }
  }
}

TEST_CASE("split_heads gradient matches finite differences", "[ops][heads][grad]") {
  Tensor x = random_tensor({2, 3, 6}, 3);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::split_heads(tape, in[0], 3); };
  CHECK(check_gradients(f, {x}) == "");
}

TEST_CASE("merge_heads gradient matches finite differences", "[ops][heads][grad]") {
  Tensor x = random_tensor({2, 2, 3, 4}, 4);
  auto f = [](Tape& tape, const std::vector<Tensor>& in) { return ops::merge_heads(tape, in[0]); };
  CHECK(check_gradients(f, {x}) == "");
}

TEST_CASE("head gradients accumulate into an existing gradient", "[ops][heads][grad]") {
  Tape tape;
  Tensor x = random_tensor({1, 2, 4}, 5);
  x.grad().fill(1.f);
  Tensor y = ops::split_heads(tape, x, 2);
  tape.backward(y, Tensor::full(y.shape(), 2.f));
  for (float g : x.grad().to_vector()) CHECK(g == 3.f);
}

TEST_CASE("split_heads rejects a width not divisible by the heads", "[ops][heads]") {
  Tape tape;
  Tensor x = Tensor::zeros({1, 2, 6});
  CHECK_THROWS_WITH(ops::split_heads(tape, x, 4), Catch::Contains("D=6") && Catch::Contains("H=4"));
}

TEST_CASE("split_heads of a column range reads those columns in place - its gradient lands there",
          "[ops][heads][grad]") {
  // x (B, T, 3D) as a fused qkv projection: the middle D columns, split into heads.
  const int64_t B = 2, T = 3, H = 2, D = 4;
  Tensor x = random_tensor({B, T, 3 * D}, 5, 1.f, false);
  Tape tape;
  Tensor part = Tensor::empty({B, T, D});
  for (int64_t row = 0; row < B * T; ++row)
    for (int64_t c = 0; c < D; ++c) part.data()[row * D + c] = x.data()[row * 3 * D + D + c];
  CHECK(ops::split_heads(tape, x, H, D, D).to_vector() == ops::split_heads(tape, part, H).to_vector());
  CHECK_THROWS_WITH(ops::split_heads(tape, x, H, 2 * D + 1, D), Catch::Contains("are not inside"));

  // q, k and v of one tensor: three slices whose gradients add up in one buffer.
  Tensor fused = random_tensor({B, T, 3 * D}, 6);
  auto three = [&](Tape& t, const std::vector<Tensor>& in) {
    Tensor q = ops::split_heads(t, in[0], H, 0, D);
    Tensor k = ops::split_heads(t, in[0], H, D, D);
    Tensor v = ops::split_heads(t, in[0], H, 2 * D, D);
    return ops::merge_heads(t, ops::add(t, ops::add(t, q, k, 1.f, 2.f), v, 1.f, -3.f));
  };
  CHECK(check_gradients(three, {fused}) == "");
}

TEST_CASE("bf16 heads are the f32 heads rounded - their gradients are f32 and the same", "[ops][heads]") {
  Tensor x = random_tensor({2, 3, 8}, 7);
  Tensor weights = random_tensor({2, 2, 3, 4}, 8, 1.f, false);
  std::vector<float> f32_grad, bf16_grad;
  for (DType dtype : {DType::f32, DType::bf16}) {
    x.zero_grad();
    Tape tape;
    Tensor y = ops::split_heads(tape, x, 2, dtype);
    CHECK(y.dtype() == dtype);
    Tensor f32_y = ops::split_heads(tape, x.detach(), 2);
    for (int64_t i = 0; i < y.numel(); ++i) {
      float expected = bf16_to_f32(f32_to_bf16(f32_y.data()[i]));
      CHECK((dtype == DType::bf16 ? bf16_to_f32(y.data_bf16()[i]) : y.data()[i]) ==
            (dtype == DType::bf16 ? expected : f32_y.data()[i]));
    }
    tape.backward(y, weights);
    (dtype == DType::f32 ? f32_grad : bf16_grad) = x.grad().to_vector();
  }
  CHECK(bf16_grad == f32_grad);
  Tape tape;
  Tensor merged = ops::merge_heads(tape, ops::split_heads(tape, x.detach(), 2), DType::bf16);
  CHECK(merged.dtype() == DType::bf16);
  CHECK(bf16_to_f32(merged.data_bf16()[5]) == bf16_to_f32(f32_to_bf16(x.data()[5])));
}
