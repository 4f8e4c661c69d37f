#pragma once
// broadcast_add: y[b, s, :] = a[b, s, :] + r[b, :], one vector per batch entry added at every
// position of that entry: the additive attention's query projection W s (B, A) added to each
// projected encoder state U h_i (B, S, A). ops::add repeats its second operand over LEADING
// axes only; this one repeats it over the middle axis.
//
// Shapes: B batch, S positions, D width. a (B, S, D), r (B, D) -> y (B, S, D).
#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

Tensor broadcast_add(Tape& tape, const Tensor& a, const Tensor& r);

}  // namespace attn::ops
