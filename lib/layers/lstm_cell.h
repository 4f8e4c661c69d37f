#pragma once
// LstmCell: one step of a long short-term memory cell (Hochreiter & Schmidhuber 1997, with the
// forget gate of Gers et al. 2000), in the cuDNN/PyTorch form (gate order i, f, g, o; an input
// and a hidden bias), built from ops:
//   [x_i, x_f, x_g, x_o] = W_i x + b_i     the input projection (may run for all steps at once)
//   [g_i, g_f, g_g, g_o] = W_h h + b_h     the hidden projection
//   i = sigmoid(x_i + g_i),  f = sigmoid(x_f + g_f),  g = tanh(x_g + g_g),  o = sigmoid(x_o + g_o)
//   c' = f * c + i * g
//   h' = o * tanh(c')
// Weights are Xavier-initialised and biases start at 0, as every Linear here.
//
// Shapes: B rows, T steps, I input width, H hidden width.
//   x (B, I) or (B, T, I); projected input (..., 4H); h, c, h', c' (B, H).
#include "layers/recurrent_cell.h"

namespace attn::layers {

class LstmCell : public RecurrentCell {
 public:
  // Parameters name.input.{weight (4H, I), bias (4H)}, name.hidden.{weight (4H, H), bias (4H)}.
  LstmCell(ParameterStore& store, const std::string& name, int64_t input_size, int64_t hidden_size);

 private:
  RecurrentState next_state(Tape& tape, const Tensor& projected_input, const RecurrentState& state) const override;
};

}  // namespace attn::layers
