#include "layers/positional_encoding.h"

#include <cmath>
#include <numeric>

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

PositionalEncoding::PositionalEncoding(ParameterStore& store, const std::string& name, int64_t max_positions,
                                       int64_t width, bool learned)
    : table_(learned ? store.add(name + ".weight", {max_positions, width}, init::normal(0.02f))
                     : sinusoid_table(max_positions, width)) {}

Tensor PositionalEncoding::operator()(Tape& tape, int64_t first, int64_t length) const {
  ATTN_CHECK(first + length <= table_.dim(0), "sequence of ", first + length, " positions is longer than ",
             "max_positions ", table_.dim(0), " (model.transformer.max_positions)");
  std::vector<int32_t> positions(length);
  std::iota(positions.begin(), positions.end(), static_cast<int32_t>(first));
  return ops::embedding(tape, table_, positions, {length});  // (T, D)
}

}  // namespace attn::layers
