#pragma once
// Position information for the Transformer: the fixed sinusoids of Vaswani et al. (2017),
//   PE(p, 2i) = sin(p / 10000^(2i/D)),  PE(p, 2i+1) = cos(p / 10000^(2i/D)),
// or a learned (P, D) table.
//
// Shapes: positions first..first+T-1 -> (T, D).
#include <string>

#include "core/parameter_store.h"
#include "layers/run_context.h"

namespace attn::layers {

class PositionalEncoding {
 public:
  PositionalEncoding() = default;
  PositionalEncoding(ParameterStore& store, const std::string& name, int64_t max_positions, int64_t width,
                     bool learned);
  // Rows first .. first + length - 1 of the table.
  Tensor operator()(Tape& tape, int64_t first, int64_t length) const;

 private:
  Tensor table_;  // (P, D): a parameter when learned, a constant otherwise
};

// The sinusoid table itself, (P, D).
Tensor sinusoid_table(int64_t max_positions, int64_t width);

}  // namespace attn::layers
