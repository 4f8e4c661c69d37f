#pragma once
// Rotary positions (RoFormer, Su et al. 2021; layers/positions.h): every self-attention turns
// its queries and keys by their positions (ops::rotary), so that the scores depend on the
// distance between a query and a key only. No table, no parameters, no bound on the length;
// nothing is added to the embeddings.
//
// Cross-attention stays unrotated: its queries (target positions) and keys (source positions)
// belong to different sequences, whose position difference means nothing (the source and
// target of a pair differ in length; alignment is learned from content).
#include <memory>
#include <string>

#include "layers/positions.h"

namespace attn::layers {

class RotaryPositions : public PositionScheme {
 public:
  // q, k (B, H, T, Dh) at positions first .. first + T - 1.
  void rotate_queries_keys(Tape& tape, Tensor& q, Tensor& k, int64_t first) const override;
};

// Needs an even head width d_model / heads.
std::unique_ptr<PositionScheme> make_rotary_positions(ParameterStore& store, const std::string& name,
                                                      const PositionSchemeOptions& options);

}  // namespace attn::layers
