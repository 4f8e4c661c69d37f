#include "layers/positional_encoding.h"

#include <cmath>
#include <numeric>

#include "core/parameter_store.h"
#include "ops/add.h"
#include "ops/embedding.h"

namespace attn::layers {

Tensor sinusoid_table(int64_t max_positions, int64_t width) {
  Tensor table = Tensor::empty({max_positions, width});  // (P, D)
  float* values = table.data();
  for (int64_t p = 0; p < max_positions; ++p)
    for (int64_t i = 0; i < width; i += 2) {
      double angle = double(p) / std::pow(10000.0, double(i) / double(width));
      values[p * width + i] = float(std::sin(angle));
      if (i + 1 < width) values[p * width + i + 1] = float(std::cos(angle));
    }
  return table;
}

std::unique_ptr<PositionScheme> make_sinusoidal_positions(ParameterStore&, const std::string&,
                                                          const PositionSchemeOptions& options) {
  return std::make_unique<PositionTable>(sinusoid_table(options.max_positions, options.width));
}

std::unique_ptr<PositionScheme> make_learned_positions(ParameterStore& store, const std::string& name,
                                                       const PositionSchemeOptions& options) {
  return std::make_unique<PositionTable>(
      store.add(name + ".weight", {options.max_positions, options.width}, init::normal(0.02f)));
}

Tensor PositionTable::embed(Tape& tape, const Tensor& x, int64_t first) const {
  const int64_t length = x.dim(-2);
  ATTN_CHECK(first + length <= table_.dim(0), "sequence of ", first + length, " positions is longer than ",
             "max_positions ", table_.dim(0), " (model.transformer.max_positions)");
  std::vector<int32_t> positions(length);
  std::iota(positions.begin(), positions.end(), static_cast<int32_t>(first));
  return ops::add(tape, x, ops::embedding(tape, table_, positions, {length}));  // (B, T, D) + (T, D)
}

}  // namespace attn::layers
