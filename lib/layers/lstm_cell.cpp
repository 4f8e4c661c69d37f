#include "layers/lstm_cell.h"

#include "ops/activation.h"
#include "ops/add.h"
#include "ops/concat.h"
#include "ops/mul.h"

namespace attn::layers {

LstmCell::LstmCell(ParameterStore& store, const std::string& name, int64_t input_size, int64_t hidden_size)
    : RecurrentCell(store, name, "lstm", input_size, hidden_size, 4, true) {}

RecurrentState LstmCell::next_state(Tape& tape, const Tensor& projected_input, const RecurrentState& state) const {
  int64_t width = hidden_size();
  Tensor gates = ops::add(tape, projected_input, project_hidden(tape, state.h));                       // (B, 4H)
  std::vector<Tensor> blocks = ops::split(tape, gates, {2 * width, width, width});                     // [i f], g, o
  std::vector<Tensor> input_forget = ops::split(tape, ops::sigmoid(tape, blocks[0]), {width, width});  // i, f
  Tensor candidate = ops::tanh(tape, blocks[1]);                                                       // g (B, H)
  Tensor output = ops::sigmoid(tape, blocks[2]);                                                       // o (B, H)
  Tensor c = ops::add(tape, ops::mul(tape, input_forget[1], state.c), ops::mul(tape, input_forget[0], candidate));
  return {ops::mul(tape, output, ops::tanh(tape, c)), c};  // h' = o * tanh(c'), c'
}

}  // namespace attn::layers
