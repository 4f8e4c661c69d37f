#include "layers/recurrent_cell.h"

#include "layers/gru_cell.h"
#include "layers/lstm_cell.h"
#include "layers/row_gather.h"
#include "ops/add.h"
#include "ops/mul.h"

namespace attn::layers {

namespace {

template <class Cell>
std::unique_ptr<RecurrentCell> make(ParameterStore& store, const std::string& name, int64_t input_size,
                                    int64_t hidden_size) {
  return std::make_unique<Cell>(store, name, input_size, hidden_size);
}

}  // namespace

// The one registration of the cells, one for each CellType, which is what model.rnn.cell accepts
// (tests/models/test_model_factory.cpp holds the two together).
const std::vector<RecurrentCellKind>& recurrent_cell_kinds() {
  static const std::vector<RecurrentCellKind> kinds = {{CellType::gru, make<GruCell>},
                                                       {CellType::lstm, make<LstmCell>}};
  return kinds;
}

std::unique_ptr<RecurrentCell> make_recurrent_cell(CellType kind, ParameterStore& store, const std::string& name,
                                                   int64_t input_size, int64_t hidden_size) {
  for (const auto& registered : recurrent_cell_kinds())
    if (kind == registered.type) return registered.make(store, name, input_size, hidden_size);
  ATTN_CHECK(false, "recurrent cell \"", choice_name(kind), "\" has no registration");
}

RecurrentCell::RecurrentCell(ParameterStore& store, const std::string& name, const char* kind, int64_t input_size,
                             int64_t hidden_size, int64_t gates, bool memory_cell)
    : input_(store, name + ".input", input_size, gates * hidden_size),
      hidden_(store, name + ".hidden", hidden_size, gates * hidden_size),
      kind_(kind),
      hidden_size_(hidden_size),
      gates_(gates),
      memory_cell_(memory_cell) {}

RecurrentState RecurrentCell::initial_state(const Tensor& h) const {
  return {h, memory_cell_ ? Tensor::zeros(h.shape()) : Tensor()};
}

RecurrentState RecurrentCell::step(Tape& tape, const Tensor& projected_input, const RecurrentState& state) const {
  const Tensor& h = state.h;
  int64_t width = hidden_size_;
  ATTN_CHECK(projected_input.rank() == 2 && projected_input.dim(1) == gates_ * width && h.rank() == 2 &&
                 h.dim(1) == width && h.dim(0) == projected_input.dim(0),
             kind_, " step: projected input ", to_string(projected_input.shape()), " and state ", to_string(h.shape()),
             " do not fit hidden size ", width);
  ATTN_CHECK(!memory_cell_ || (state.c.defined() && state.c.shape() == h.shape()), kind_, " step: memory cell ",
             state.c.defined() ? to_string(state.c.shape()) : "undefined", " does not match state ",
             to_string(h.shape()));
  return next_state(tape, projected_input, state);
}

Tensor masked_update(Tape& tape, const Tensor& x_new, const Tensor& x_prev, const Tensor& mask) {
  return ops::add(tape, x_prev, ops::mul(tape, mask, ops::sub(tape, x_new, x_prev)));  // (B, H)
}

RecurrentState masked_update(Tape& tape, const RecurrentState& next, const RecurrentState& previous,
                             const Tensor& mask) {
  Tensor c = next.c.defined() ? masked_update(tape, next.c, previous.c, mask) : Tensor();
  return {masked_update(tape, next.h, previous.h, mask), c};
}

RecurrentState select_rows(const RecurrentState& state, const std::vector<int64_t>& rows) {
  return {select_rows(state.h, rows), state.c.defined() ? select_rows(state.c, rows) : Tensor()};
}

}  // namespace attn::layers
