#include "layers/gru_cell.h"

#include "ops/activation.h"
#include "ops/add.h"
#include "ops/concat.h"
#include "ops/mul.h"

namespace attn::layers {

GruCell::GruCell(ParameterStore& store, const std::string& name, int64_t input_size, int64_t hidden_size)
    : input_(store, name + ".input", input_size, 3 * hidden_size),
      hidden_(store, name + ".hidden", hidden_size, 3 * hidden_size),
      hidden_size_(hidden_size) {}

Tensor GruCell::project_input(Tape& tape, const Tensor& x) const { return input_(tape, x); }

Tensor GruCell::step(Tape& tape, const Tensor& projected_input, const Tensor& h) const {
  int64_t width = hidden_size_;
  ATTN_CHECK(projected_input.rank() == 2 && projected_input.dim(1) == 3 * width && h.rank() == 2 && h.dim(1) == width &&
                 h.dim(0) == projected_input.dim(0),
             "gru step: projected input ", to_string(projected_input.shape()), " and state ", to_string(h.shape()),
             " do not fit hidden size ", width);
  std::vector<Tensor> x = ops::split(tape, projected_input, {2 * width, width});   // (B, 2H), (B, H)
  std::vector<Tensor> g = ops::split(tape, hidden_(tape, h), {2 * width, width});  // (B, 2H), (B, H)
  Tensor gates = ops::sigmoid(tape, ops::add(tape, x[0], g[0]));                   // (B, 2H): [r, z]
  std::vector<Tensor> rz = ops::split(tape, gates, {width, width});                // r, z (B, H)
  Tensor n = ops::tanh(tape, ops::add(tape, x[1], ops::mul(tape, rz[0], g[1])));   // (B, H)
  return ops::add(tape, n, ops::mul(tape, rz[1], ops::sub(tape, h, n)));           // (B, H)
}

Tensor GruCell::operator()(Tape& tape, const Tensor& x, const Tensor& h) const {
  return step(tape, project_input(tape, x), h);
}

Tensor masked_update(Tape& tape, const Tensor& h_new, const Tensor& h_prev, const Tensor& mask) {
  return ops::add(tape, h_prev, ops::mul(tape, mask, ops::sub(tape, h_new, h_prev)));  // (B, H)
}

}  // namespace attn::layers
