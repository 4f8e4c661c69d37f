#pragma once
// GruCell: one step of a gated recurrent unit (Cho et al. 2014, in the cuDNN/PyTorch form where
// the reset gate scales the projected previous state), built from ops:
//   [x_r, x_z, x_n] = W_i x + b_i         the input projection (may run for all steps at once)
//   [g_r, g_z, g_n] = W_h h + b_h         the hidden projection (b_hn stays inside r * (.))
//   r = sigmoid(x_r + g_r),  z = sigmoid(x_z + g_z)
//   n = tanh(x_n + r * g_n)
//   h' = (1 - z) * n + z * h  =  n + z * (h - n)
// It has no memory cell: the state's c stays undefined.
//
// Shapes: B rows, T steps, I input width, H hidden width.
//   x (B, I) or (B, T, I); projected input (..., 3H); h, h' (B, H).
#include "layers/recurrent_cell.h"

namespace attn::layers {

class GruCell : public RecurrentCell {
 public:
  // Parameters name.input.{weight (3H, I), bias (3H)}, name.hidden.{weight (3H, H), bias (3H)}.
  GruCell(ParameterStore& store, const std::string& name, int64_t input_size, int64_t hidden_size);

 private:
  RecurrentState next_state(Tape& tape, const Tensor& projected_input, const RecurrentState& state) const override;
};

}  // namespace attn::layers
