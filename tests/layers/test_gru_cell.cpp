#include <cmath>

#include <catch2/catch.hpp>

#include "grad_check.h"
#include "layers/gru_cell.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

namespace {

// The GRU equations of gru_cell.h in plain loops, for x (B, I) and h (B, H).
std::vector<float> reference_step(const ParameterStore& store, const Tensor& x, const Tensor& h) {
  std::vector<float> wi = store.get("gru.input.weight").to_vector(), bi = store.get("gru.input.bias").to_vector();
  std::vector<float> wh = store.get("gru.hidden.weight").to_vector(), bh = store.get("gru.hidden.bias").to_vector();
  std::vector<float> xs = x.to_vector(), hs = h.to_vector();
  int64_t rows = x.dim(0), in = x.dim(1), width = h.dim(1);
  auto project = [&](const std::vector<float>& w, const std::vector<float>& b, const std::vector<float>& v, int64_t k,
                     int64_t row, int64_t unit) {
    double sum = b[unit];
    for (int64_t j = 0; j < k; ++j) sum += double(w[unit * k + j]) * v[row * k + j];
    return sum;
  };
  auto sigmoid = [](double v) { return 1.0 / (1.0 + std::exp(-v)); };
  std::vector<float> result(rows * width);
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t u = 0; u < width; ++u) {
      double r = sigmoid(project(wi, bi, xs, in, b, u) + project(wh, bh, hs, width, b, u));
      double z = sigmoid(project(wi, bi, xs, in, b, width + u) + project(wh, bh, hs, width, b, width + u));
      double g_n = project(wh, bh, hs, width, b, 2 * width + u);
      double n = std::tanh(project(wi, bi, xs, in, b, 2 * width + u) + r * g_n);
      result[b * width + u] = float((1 - z) * n + z * hs[b * width + u]);
    }
  return result;
}

// A cell with random (non-zero) biases, so the test also sees b_hn inside r * (.).
struct TestCell {
  ParameterStore store{5};
  layers::GruCell cell{store, "gru", 3, 4};
  TestCell() {
    store.finalize();
    store.get("gru.input.bias").copy_from(random_tensor({12}, 41, 0.5f, false).to_vector());
    store.get("gru.hidden.bias").copy_from(random_tensor({12}, 42, 0.5f, false).to_vector());
  }
};

}  // namespace

TEST_CASE("gru cell step follows the GRU equations", "[layers][gru]") {
  TestCell test;
  Tensor x = random_tensor({2, 3}, 31, 1.f, false);
  Tensor h = random_tensor({2, 4}, 32, 0.5f, false);
  Tape tape;
  std::vector<float> got = test.cell(tape, x, h).to_vector();
  std::vector<float> expected = reference_step(test.store, x, h);
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(expected[i]).margin(1e-5));
}

TEST_CASE("gru cell projects a whole sequence like each step alone", "[layers][gru]") {
  TestCell test;
  Tensor sequence = random_tensor({2, 3, 3}, 33, 1.f, false);  // (B, T, I)
  Tape tape;
  std::vector<float> all = test.cell.project_input(tape, sequence).to_vector();  // (B, T, 3H)
  std::vector<float> values = sequence.to_vector();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 3; ++t) {
      auto first = values.begin() + (b * 3 + t) * 3;
      Tensor row = Tensor::from_vector({1, 3}, {first, first + 3});
      std::vector<float> one = test.cell.project_input(tape, row).to_vector();
      for (int64_t j = 0; j < 12; ++j) CHECK(all[(b * 3 + t) * 12 + j] == Approx(one[j]).margin(1e-6));
    }
}

TEST_CASE("gru cell gradients match finite differences for input - state and every parameter", "[layers][gru][grad]") {
  TestCell test;
  std::vector<Tensor> inputs{random_tensor({2, 3}, 34), random_tensor({2, 4}, 35, 0.5f)};
  for (const auto& parameter : test.store.parameters()) inputs.push_back(parameter.tensor);
  auto f = [&test](Tape& tape, const std::vector<Tensor>& x) { return test.cell(tape, x[0], x[1]); };
  CHECK(check_gradients(f, inputs) == "");
}

TEST_CASE("gru cell gradients accumulate over two steps with shared weights", "[layers][gru][grad]") {
  TestCell test;
  std::vector<Tensor> inputs{random_tensor({2, 3}, 36), random_tensor({2, 3}, 37), random_tensor({2, 4}, 38, 0.5f)};
  for (const auto& parameter : test.store.parameters()) inputs.push_back(parameter.tensor);
  auto f = [&test](Tape& tape, const std::vector<Tensor>& x) {
    return test.cell(tape, x[1], test.cell(tape, x[0], x[2]));
  };
  CHECK(check_gradients(f, inputs) == "");
}

TEST_CASE("gru cell rejects a state that does not fit its hidden size", "[layers][gru]") {
  TestCell test;
  Tape tape;
  CHECK_THROWS_WITH(test.cell(tape, Tensor::zeros({2, 3}), Tensor::zeros({2, 5})),
                    Catch::Contains("(2, 12)") && Catch::Contains("(2, 5)"));
}

TEST_CASE("masked update keeps padded rows exactly and takes the new state elsewhere", "[layers][gru]") {
  Tape tape;
  Tensor h_new = random_tensor({2, 3}, 39, 1.f, false);
  Tensor h_prev = random_tensor({2, 3}, 40, 1.f, false);
  Tensor mask = Tensor::from_vector({2, 3}, {1, 1, 1, 0, 0, 0});
  std::vector<float> got = layers::masked_update(tape, h_new, h_prev, mask).to_vector();
  std::vector<float> fresh = h_new.to_vector(), kept = h_prev.to_vector();
  for (int j = 0; j < 3; ++j) {
    CHECK(got[j] == Approx(fresh[j]).margin(1e-6));
    CHECK(got[3 + j] == kept[3 + j]);  // bit for bit: padding leaves the state unchanged
  }
}

TEST_CASE("masked update gradients match finite differences", "[layers][gru][grad]") {
  Tensor mask = Tensor::from_vector({2, 3}, {1, 1, 1, 0, 0, 0});
  auto f = [mask](Tape& tape, const std::vector<Tensor>& x) { return layers::masked_update(tape, x[0], x[1], mask); };
  CHECK(check_gradients(f, {random_tensor({2, 3}, 43), random_tensor({2, 3}, 44)}) == "");
}
