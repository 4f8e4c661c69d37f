#pragma once
// ALiBi positions (Press et al. 2022, "Train short, test long"; layers/positions.h): no
// embedding is added; every self-attention score gets -m_h |i - j| for a query at position i
// and a key at position j, with a fixed slope m_h per head (ops::AttentionBias). In the
// decoder's causal self-attention that is the paper's -m_h (i - j); the encoder sees both sides
// of a query and is penalised symmetrically, with the same slopes (the paper defines only the
// causal case). No table, no parameters, no bound on the length.
//
// Cross-attention has no bias: source and target positions belong to different sequences.
#include <memory>
#include <string>
#include <vector>

#include "layers/positions.h"

namespace attn::layers {

class AlibiPositions : public PositionScheme {
 public:
  explicit AlibiPositions(int64_t heads);
  ops::AttentionBias attention_bias() const override { return bias_; }

 private:
  ops::AttentionBias bias_;
};

// The paper's slopes for H heads: for H a power of two the geometric sequence
// m_h = 2^(-8 (h + 1) / H), h = 0 .. H - 1 (1/2, 1/4, ..., 1/256 for 8 heads); otherwise the
// slopes of the largest power of two n < H, followed by those of 2n heads that n lacks
// (2^(-8 (2k + 1) / 2n), k = 0, 1, ...) until there are H.
std::vector<float> alibi_slopes(int64_t heads);

std::unique_ptr<PositionScheme> make_alibi_positions(ParameterStore& store, const std::string& name,
                                                     const PositionSchemeOptions& options);

}  // namespace attn::layers
