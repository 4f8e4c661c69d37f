#pragma once
// The absolute position schemes of the Transformer (layers/positions.h), each adding row p of a
// (P, D) table to the embedding at position p: the fixed sinusoids of Vaswani et al. (2017),
//   PE(p, 2i) = sin(p / 10000^(2i/D)),  PE(p, 2i+1) = cos(p / 10000^(2i/D)),
// or a learned table (parameter NAME.weight).
//
// Shapes: x (B, T, D) at positions first..first+T-1; table rows (T, D).
#include <memory>
#include <string>

#include "layers/positions.h"

namespace attn::layers {

class PositionTable : public PositionScheme {
 public:
  explicit PositionTable(Tensor table) : table_(std::move(table)) {}
  Tensor embed(Tape& tape, const Tensor& x, int64_t first) const override;

 private:
  Tensor table_;  // (P, D): a parameter when learned, a constant otherwise
};

std::unique_ptr<PositionScheme> make_sinusoidal_positions(ParameterStore& store, const std::string& name,
                                                          const PositionSchemeOptions& options);
std::unique_ptr<PositionScheme> make_learned_positions(ParameterStore& store, const std::string& name,
                                                       const PositionSchemeOptions& options);

// The sinusoid table itself, (P, D).
Tensor sinusoid_table(int64_t max_positions, int64_t width);

}  // namespace attn::layers
