// What every registered recurrent cell must do, run on each (GRU, LSTM): project a whole
// sequence like each step alone, match finite differences for its inputs, state and every
// parameter, refuse a state that does not fit; and the masked update and row gather of states.
// Each cell's own equations are in test_gru_cell.cpp and test_lstm_cell.cpp.
#include <catch2/catch.hpp>

#include "grad_check.h"
#include "layers/recurrent_cell.h"
#include "ops/concat.h"
#include "random_biases.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

namespace {

constexpr int64_t kInput = 3, kHidden = 4;

// A cell of every registered kind in turn, with random (non-zero) biases.
struct TestCell {
  std::string kind;
  ParameterStore store{5};
  std::unique_ptr<layers::RecurrentCell> cell;

  explicit TestCell(const std::string& kind_name)
      : kind(kind_name),
        cell(layers::make_recurrent_cell(*parse_choice<CellType>(kind_name), store, "cell", kInput, kHidden)) {
    store.finalize();
    attn::testing::randomize_biases(store, 41);
  }
  // x (B, I), state inputs: h, and c when the cell has one.
  std::vector<Tensor> state_inputs(uint64_t seed) const {
    std::vector<Tensor> inputs{random_tensor({2, kHidden}, seed, 0.5f)};
    if (cell->has_memory_cell()) inputs.push_back(random_tensor({2, kHidden}, seed + 1, 0.5f));
    return inputs;
  }
  layers::RecurrentState state_of(const std::vector<Tensor>& inputs, size_t first) const {
    return {inputs[first], cell->has_memory_cell() ? inputs[first + 1] : Tensor()};
  }
  // [h; c] (B, 2H) or h (B, H): everything a step hands on.
  Tensor joined(Tape& tape, const layers::RecurrentState& state) const {
    return state.c.defined() ? ops::concat(tape, {state.h, state.c}) : state.h;
  }
};

std::vector<std::string> cell_names() {
  std::vector<std::string> names;
  for (const auto& kind : layers::recurrent_cell_kinds()) names.push_back(choice_name(kind.type));
  return names;
}

}  // namespace

TEST_CASE("a recurrent cell projects a whole sequence like each step alone", "[layers][recurrent]") {
  TestCell test(GENERATE(from_range(cell_names())));
  INFO(test.kind);
  Tensor sequence = random_tensor({2, 3, kInput}, 33, 1.f, false);  // (B, T, I)
  Tape tape;
  std::vector<float> all = test.cell->project_input(tape, sequence).to_vector();  // (B, T, G H)
  const int64_t projected = int64_t(all.size()) / 6;
  std::vector<float> values = sequence.to_vector();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 3; ++t) {
      auto first = values.begin() + (b * 3 + t) * kInput;
      Tensor row = Tensor::from_vector({1, kInput}, {first, first + kInput});
      std::vector<float> one = test.cell->project_input(tape, row).to_vector();
      REQUIRE(int64_t(one.size()) == projected);
      for (int64_t j = 0; j < projected; ++j) CHECK(all[(b * 3 + t) * projected + j] == Approx(one[j]).margin(1e-6));
    }
}

TEST_CASE("recurrent cell gradients match finite differences for input - state and every parameter",
          "[layers][recurrent][grad]") {
  TestCell test(GENERATE(from_range(cell_names())));
  INFO(test.kind);
  std::vector<Tensor> inputs{random_tensor({2, kInput}, 34)};
  for (const Tensor& state : test.state_inputs(35)) inputs.push_back(state);
  for (const auto& parameter : test.store.parameters()) inputs.push_back(parameter.tensor);
  auto f = [&test](Tape& tape, const std::vector<Tensor>& x) {
    return test.joined(tape, (*test.cell)(tape, x[0], test.state_of(x, 1)));
  };
  CHECK(check_gradients(f, inputs) == "");
}

TEST_CASE("recurrent cell gradients accumulate over two steps with shared weights", "[layers][recurrent][grad]") {
  TestCell test(GENERATE(from_range(cell_names())));
  INFO(test.kind);
  std::vector<Tensor> inputs{random_tensor({2, kInput}, 36), random_tensor({2, kInput}, 37)};
  for (const Tensor& state : test.state_inputs(38)) inputs.push_back(state);
  for (const auto& parameter : test.store.parameters()) inputs.push_back(parameter.tensor);
  auto f = [&test](Tape& tape, const std::vector<Tensor>& x) {
    const layers::RecurrentCell& cell = *test.cell;
    return test.joined(tape, cell(tape, x[1], cell(tape, x[0], test.state_of(x, 2))));
  };
  CHECK(check_gradients(f, inputs) == "");
}

TEST_CASE("a recurrent cell rejects a state that does not fit its hidden size", "[layers][recurrent]") {
  TestCell test(GENERATE(from_range(cell_names())));
  INFO(test.kind);
  Tape tape;
  CHECK_THROWS_WITH((*test.cell)(tape, Tensor::zeros({2, kInput}), test.cell->initial_state(Tensor::zeros({2, 5}))),
                    Catch::Contains(test.kind + " step") && Catch::Contains("(2, 5)"));
}

TEST_CASE("masked update keeps padded rows exactly and takes the new state elsewhere", "[layers][recurrent]") {
  Tape tape;
  Tensor h_new = random_tensor({2, 3}, 39, 1.f, false);
  Tensor h_prev = random_tensor({2, 3}, 40, 1.f, false);
  Tensor mask = Tensor::from_vector({2, 3}, {1, 1, 1, 0, 0, 0});
  std::vector<float> fresh = h_new.to_vector(), kept = h_prev.to_vector();
  auto check_rows = [&](const std::vector<float>& got) {
    for (int j = 0; j < 3; ++j) {
      CHECK(got[j] == Approx(fresh[j]).margin(1e-6));
      CHECK(got[3 + j] == kept[3 + j]);  // bit for bit: padding leaves the state unchanged
    }
  };
  check_rows(layers::masked_update(tape, h_new, h_prev, mask).to_vector());
  SECTION("a state's h and c alike; a state without c keeps none") {
    layers::RecurrentState both = layers::masked_update(tape, {h_new, h_new}, {h_prev, h_prev}, mask);
    check_rows(both.h.to_vector());
    check_rows(both.c.to_vector());
    CHECK_FALSE(layers::masked_update(tape, {h_new, Tensor()}, {h_prev, Tensor()}, mask).c.defined());
  }
}

TEST_CASE("masked update gradients match finite differences", "[layers][recurrent][grad]") {
  Tensor mask = Tensor::from_vector({2, 3}, {1, 1, 1, 0, 0, 0});
  auto f = [mask](Tape& tape, const std::vector<Tensor>& x) { return layers::masked_update(tape, x[0], x[1], mask); };
  CHECK(check_gradients(f, {random_tensor({2, 3}, 43), random_tensor({2, 3}, 44)}) == "");
}

TEST_CASE("a recurrent state's rows are gathered in h and c alike", "[layers][recurrent]") {
  Tensor h = Tensor::from_vector({2, 2}, {1, 2, 3, 4}), c = Tensor::from_vector({2, 2}, {5, 6, 7, 8});
  layers::RecurrentState gathered = layers::select_rows(layers::RecurrentState{h, c}, {1, 1, 0});
  CHECK(gathered.h.to_vector() == std::vector<float>{3, 4, 3, 4, 1, 2});
  CHECK(gathered.c.to_vector() == std::vector<float>{7, 8, 7, 8, 5, 6});
  CHECK_FALSE(layers::select_rows(layers::RecurrentState{h, Tensor()}, {0}).c.defined());
}
