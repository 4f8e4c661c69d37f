// What a recorded step keeps alive until its backward: only the values some backward reads.
// A closure that only adds to a gradient holds a grad_only() handle, so intermediates such as
// a linear's output under relu or dropout are freed as soon as the forward moves on.
#include <catch2/catch.hpp>

#include "core/buffer_pool.h"
#include "grad_check.h"
#include "ops/activation.h"
#include "ops/add.h"
#include "ops/dropout.h"
#include "ops/linear.h"

using namespace attn;
using attn::testing::random_tensor;

namespace {
size_t live_bytes() { return BufferPool::instance().stats().live_bytes; }
}  // namespace

TEST_CASE("the values of linear -> relu -> dropout -> add outputs are freed before the backward",
          "[ops][saved_values]") {
  Tape tape;
  Rng rng(3);
  const int64_t rows = 512, width = 64, hidden = 256;
  Tensor x = random_tensor({rows, width}, 1);
  Tensor weight = random_tensor({hidden, width}, 2);
  Tensor bias = random_tensor({hidden}, 3);
  const size_t hidden_bytes = rows * hidden * sizeof(float);

  // Each intermediate is released by the caller as soon as the next op has it.
  Tensor h = ops::linear(tape, x, weight, bias);  // (N, F): relu's backward reads its output, not this
  Tensor r = ops::relu(tape, h);                  // (N, F): kept, relu's backward reads it
  size_t before = live_bytes();
  h = Tensor();
  CHECK(live_bytes() + hidden_bytes <= before);

  Tensor d = ops::dropout(tape, r, 0.5f, true, rng);  // (N, F): the mask is kept, not these values
  Tensor s = ops::add(tape, d, r);                    // (N, F): add's backward reads no values
  before = live_bytes();
  d = Tensor();
  s = Tensor();
  CHECK(live_bytes() + 2 * hidden_bytes <= before);
}

TEST_CASE("a chain whose intermediates were freed still gets exact gradients", "[ops][saved_values][grad]") {
  auto f = [](Tape& tape, const std::vector<Tensor>& in) {
    Tensor r = ops::tanh(tape, ops::linear(tape, in[0], in[1], in[2]));  // the linear output is dropped here
    return ops::add(tape, r, ops::relu(tape, r));
  };
  CHECK(attn::testing::check_gradients(
            f, {random_tensor({6, 4}, 11), random_tensor({5, 4}, 12), random_tensor({5}, 13)}) == "");
}
