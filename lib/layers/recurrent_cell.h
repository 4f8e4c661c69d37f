#pragma once
// RecurrentCell: one step of a gated recurrent cell, the interface the RNN model runs its encoder
// directions and its decoder on, whatever the cell (model.rnn.cell). Every cell here has G gate
// blocks fed by two projections:
//   W_i x + b_i   the input projection, (..., I) -> (..., G H); independent of the state, so the
//                 encoder projects a whole sequence in one matmul (project_input)
//   W_h h + b_h   the hidden projection, (B, H) -> (B, G H), once per step
// The state is {h, c}: h is what the model reads (attention, outputs); c is the LSTM's memory
// cell and stays undefined for cells without one (the GRU).
//
// Cells register by name in ONE table (recurrent_cell.cpp); a cell named K has parameters
// NAME.input.{weight (G H, I), bias (G H)} and NAME.hidden.{weight (G H, H), bias (G H)}.
//
// Shapes: B rows, T steps, I input width, H hidden width, G gate blocks (GRU 3, LSTM 4).
#include <memory>
#include <string>
#include <vector>

#include "core/parameter_store.h"
#include "layers/linear.h"

namespace attn::layers {

struct RecurrentState {
  Tensor h;  // (B, H)
  Tensor c;  // (B, H) memory cell, or undefined when the cell has none
};

class RecurrentCell {
 public:
  virtual ~RecurrentCell() = default;

  // W_i x + b_i: (..., I) -> (..., G H).
  Tensor project_input(Tape& tape, const Tensor& x) const { return input_(tape, x); }
  // One step from an already projected input (B, G H) and the previous state, after checking
  // that both fit the cell (c too, when it has one).
  RecurrentState step(Tape& tape, const Tensor& projected_input, const RecurrentState& state) const;
  // step(project_input(x), state): x (B, I).
  RecurrentState operator()(Tape& tape, const Tensor& x, const RecurrentState& state) const {
    return step(tape, project_input(tape, x), state);
  }
  // The state {h, 0} (c only when the cell has a memory cell): where a sequence starts.
  RecurrentState initial_state(const Tensor& h) const;

  int64_t hidden_size() const { return hidden_size_; }
  bool has_memory_cell() const { return memory_cell_; }

 protected:
  // `kind` names the cell in errors; `gates` is G.
  RecurrentCell(ParameterStore& store, const std::string& name, const char* kind, int64_t input_size,
                int64_t hidden_size, int64_t gates, bool memory_cell);
  // W_h h + b_h: (B, H) -> (B, G H).
  Tensor project_hidden(Tape& tape, const Tensor& h) const { return hidden_(tape, h); }

 private:
  // The cell's equations: step() once the shapes are checked.
  virtual RecurrentState next_state(Tape& tape, const Tensor& projected_input, const RecurrentState& state) const = 0;

  Linear input_, hidden_;
  const char* kind_;
  int64_t hidden_size_, gates_;
  bool memory_cell_;
};

// The length-masked update x = m * x_new + (1 - m) * x_prev, computed as x_prev + m * (x_new -
// x_prev): rows with m = 1 (a real token at this step) take the new value, rows with m = 0
// (padding) keep x_prev exactly. x_new, x_prev, mask (B, H); the mask gets no gradient.
Tensor masked_update(Tape& tape, const Tensor& x_new, const Tensor& x_prev, const Tensor& mask);
// The same update of h and of c (when the cell has one).
RecurrentState masked_update(Tape& tape, const RecurrentState& next, const RecurrentState& previous,
                             const Tensor& mask);
// Rows `rows` of h and c (layers/row_gather.h): a decoding state's reorder.
RecurrentState select_rows(const RecurrentState& state, const std::vector<int64_t>& rows);

// ---- The registry: one entry per cell --------------------------------------------------------

struct RecurrentCellKind {
  CellType type;  // its model.rnn.cell; choice_name(type) is the cell's parameter-name suffix in the RNN
  std::unique_ptr<RecurrentCell> (*make)(ParameterStore& store, const std::string& name, int64_t input_size,
                                         int64_t hidden_size);
};

// Every registered cell, in registration order: one for each CellType (core/choice.h).
const std::vector<RecurrentCellKind>& recurrent_cell_kinds();
// A cell of kind `kind` registering parameters under `name`.
std::unique_ptr<RecurrentCell> make_recurrent_cell(CellType kind, ParameterStore& store, const std::string& name,
                                                   int64_t input_size, int64_t hidden_size);

}  // namespace attn::layers
