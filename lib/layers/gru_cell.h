#pragma once
// GruCell: one step of a gated recurrent unit (Cho et al. 2014, in the cuDNN/PyTorch form where
// the reset gate scales the projected previous state), built from ops:
//   [x_r, x_z, x_n] = W_i x + b_i         the input projection (may run for all steps at once)
//   [g_r, g_z, g_n] = W_h h + b_h         the hidden projection (b_hn stays inside r * (.))
//   r = sigmoid(x_r + g_r),  z = sigmoid(x_z + g_z)
//   n = tanh(x_n + r * g_n)
//   h' = (1 - z) * n + z * h  =  n + z * (h - n)
//
// Shapes: B rows, T steps, I input width, H hidden width.
//   x (B, I) or (B, T, I); projected input (..., 3H); h, h' (B, H).
#include <string>

#include "core/parameter_store.h"
#include "layers/linear.h"

namespace attn::layers {

class GruCell {
 public:
  GruCell() = default;
  // Parameters name.input.{weight (3H, I), bias (3H)}, name.hidden.{weight (3H, H), bias (3H)}.
  GruCell(ParameterStore& store, const std::string& name, int64_t input_size, int64_t hidden_size);

  // W_i x + b_i: (..., I) -> (..., 3H). A whole sequence in one matmul when x is (B, T, I).
  Tensor project_input(Tape& tape, const Tensor& x) const;
  // One step from an already projected input (B, 3H) and the previous state (B, H) -> (B, H).
  Tensor step(Tape& tape, const Tensor& projected_input, const Tensor& h) const;
  // step(project_input(x), h): x (B, I), h (B, H) -> (B, H).
  Tensor operator()(Tape& tape, const Tensor& x, const Tensor& h) const;

  int64_t hidden_size() const { return hidden_size_; }

 private:
  Linear input_, hidden_;
  int64_t hidden_size_ = 0;
};

// The length-masked update h = m * h_new + (1 - m) * h_prev, computed as h_prev + m * (h_new -
// h_prev): rows with m = 1 (a real token at this step) take the new state, rows with m = 0
// (padding) keep h_prev exactly. h_new, h_prev, mask (B, H); the mask gets no gradient.
Tensor masked_update(Tape& tape, const Tensor& h_new, const Tensor& h_prev, const Tensor& mask);

}  // namespace attn::layers
