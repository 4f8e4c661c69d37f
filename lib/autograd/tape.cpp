#include "autograd/tape.h"

#include <cstring>

namespace attn::autograd {

void Tape::backward(const Tensor& loss, float seed) {
  ATTN_CHECK(loss.numel() == 1, "backward(loss) needs a one-element loss, got ", to_string(loss.shape()));
  Tensor loss_grad = loss.grad();
  loss_grad.data()[0] += seed;
  run_reverse();
}

void Tape::backward(const Tensor& output, const Tensor& output_grad) {
  ATTN_CHECK(output.shape() == output_grad.shape(), "backward seed ", to_string(output_grad.shape()),
             " does not match output ", to_string(output.shape()));
  Tensor grad = output.grad();
  float* target = grad.data();
  const float* source = output_grad.data();
  for (int64_t i = 0; i < grad.numel(); ++i) target[i] += source[i];
  run_reverse();
}

void Tape::run_reverse() {
  // Move the closures out first: a closure may not record, and clearing frees activations.
  std::vector<Backward> closures = std::move(closures_);
  closures_.clear();
  for (auto it = closures.rbegin(); it != closures.rend(); ++it) {
    (*it)();
    *it = nullptr;  // release what this step held as soon as it has run
  }
}

}  // namespace attn::autograd
