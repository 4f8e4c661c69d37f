#include "layers/gru_cell.h"

#include "ops/activation.h"
#include "ops/add.h"
#include "ops/concat.h"
#include "ops/mul.h"

namespace attn::layers {

GruCell::GruCell(ParameterStore& store, const std::string& name, int64_t input_size, int64_t hidden_size)
    : RecurrentCell(store, name, "gru", input_size, hidden_size, 3, false) {}

RecurrentState GruCell::next_state(Tape& tape, const Tensor& projected_input, const RecurrentState& state) const {
  int64_t width = hidden_size();
  std::vector<Tensor> x = ops::split(tape, projected_input, {2 * width, width});                // (B, 2H), (B, H)
  std::vector<Tensor> g = ops::split(tape, project_hidden(tape, state.h), {2 * width, width});  // (B, 2H), (B, H)
  Tensor gates = ops::sigmoid(tape, ops::add(tape, x[0], g[0]));                                // (B, 2H): [r, z]
  std::vector<Tensor> rz = ops::split(tape, gates, {width, width});                             // r, z (B, H)
  Tensor n = ops::tanh(tape, ops::add(tape, x[1], ops::mul(tape, rz[0], g[1])));                // (B, H)
  return {ops::add(tape, n, ops::mul(tape, rz[1], ops::sub(tape, state.h, n))), Tensor()};      // (B, H)
}

}  // namespace attn::layers
