#pragma once
// activation: the pointwise nonlinearities (FFN ReLU/GELU, GRU tanh/sigmoid, attention tanh),
// forward and backward on oneDNN's eltwise primitives.
//
// Shapes: x (...) -> y x's shape.
#include "autograd/tape.h"
#include "core/choice.h"
#include "core/tensor.h"

namespace attn::ops {

// The kinds (attn::Activation) and their names are in core/choice.h.
Tensor activation(Tape& tape, const Tensor& x, Activation kind);
// The same forward, untaped, over x's own storage (for ops that recompute an activation in
// their backward instead of keeping it).
void activation_in_place(Tensor& x, Activation kind);

Tensor relu(Tape& tape, const Tensor& x);
Tensor gelu(Tape& tape, const Tensor& x);  // exact: 0.5 x (1 + erf(x / sqrt(2)))
Tensor tanh(Tape& tape, const Tensor& x);
Tensor sigmoid(Tape& tape, const Tensor& x);

}  // namespace attn::ops
