#pragma once
// Tape: the autograd engine. Ops append one backward closure each while recording; backward()
// runs them in reverse order. No graph, no topological sort: the order ops ran in is already a
// valid order, for the Transformer's batched ops and the RNN's T recorded steps alike.
#include <functional>
#include <vector>

#include "core/tensor.h"

namespace attn::autograd {

class Tape {
 public:
  using Backward = std::function<void()>;

  bool recording() const { return recording_; }
  void set_recording(bool recording) { recording_ = recording; }

  // True when an op with these inputs must record its backward: the tape records and at
  // least one input needs a gradient.
  template <class... Tensors>
  bool needs_grad(const Tensors&... inputs) const {
    return recording_ && (... || (inputs.defined() && inputs.requires_grad()));
  }

  void record(Backward backward) { closures_.push_back(std::move(backward)); }

  // Seeds d(loss)/d(loss) = seed for a one-element loss, runs every closure in reverse and
  // clears the tape (freeing the activations the closures held).
  void backward(const Tensor& loss, float seed = 1.f);
  // Seeds d(sum(output * output_grad))/d(output) = output_grad, for any output shape.
  void backward(const Tensor& output, const Tensor& output_grad);

  // Forgets every recorded closure without running it (inference, aborted steps).
  void clear() { closures_.clear(); }
  size_t size() const { return closures_.size(); }

 private:
  void run_reverse();

  std::vector<Backward> closures_;
  bool recording_ = true;
};

// Turns recording off for a scope (evaluation, decoding, finite differences).
class NoGradScope {
 public:
  explicit NoGradScope(Tape& tape) : tape_(tape), was_recording_(tape.recording()) { tape.set_recording(false); }
  ~NoGradScope() { tape_.set_recording(was_recording_); }
  NoGradScope(const NoGradScope&) = delete;
  NoGradScope& operator=(const NoGradScope&) = delete;

 private:
  Tape& tape_;
  bool was_recording_;
};

}  // namespace attn::autograd

namespace attn {
using autograd::NoGradScope;
using autograd::Tape;
}  // namespace attn
