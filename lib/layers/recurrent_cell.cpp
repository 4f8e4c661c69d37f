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
  static const std::vector<RecurrentCellKind> kinds = {{CellType::gru, make<GruCell>}, {CellType::lstm, make<LstmCell>}};
  return kinds;
}

std::unique_ptr<RecurrentCell> make_recurrent_cell(CellType kind, ParameterStore& store, const std::string& name,
                                                   int64_t input_size, int64_t hidden_size) {
  for (const auto& registered : recurrent_cell_kinds())
    if (kind == registered.type) return registered.make(store, name, input_size, hidden_size);
  ATTN_CHECK(false, "recurrent cell \"", choice_name(kind), "\" has no registration");
}

}  // namespace attn::layers
