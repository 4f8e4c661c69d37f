#pragma once
// PositionScheme: how a Transformer knows where a token is. A scheme acts at up to three places,
// each a hook whose default does nothing:
//   embed                the (B, T, D) embeddings of positions first .. first + T - 1 get position
//                        information added (absolute schemes: sinusoidal, learned);
//   rotate_queries_keys  each self-attention's q and k heads are transformed by their positions
//                        (rotary: layers/rotary_positions.h);
//   attention_bias       a per-head additive bias on the self-attention scores (ALiBi:
//                        layers/alibi_positions.h); the model puts it into the encoder's and the
//                        decoder's self-attention masks, where ops::attention places decoding
//                        steps at their cache offsets.
// Cross-attention sees no scheme: its queries and keys are positions of different sequences.
// position_schemes() is the one table Positions -> factory: a new scheme is one layer file with
// its class and one row of that table (plus its value in core/choice.h's Positions).
#include <memory>
#include <string>
#include <vector>

#include "core/choice.h"
#include "ops/attention.h"

namespace attn {

class ParameterStore;

}  // namespace attn

namespace attn::layers {

struct PositionSchemeOptions {
  int64_t max_positions = 256;  // the rows of an absolute scheme's table (has_position_table)
  int64_t width = 256;          // D
  int64_t heads = 4;            // H of every attention
};

class PositionScheme {
 public:
  virtual ~PositionScheme() = default;
  // x (B, T, D) at positions first .. first + T - 1 -> (B, T, D).
  virtual Tensor embed(Tape& tape, const Tensor& x, int64_t first) const;
  // q (B, H, T, Dh) and k (B, H, T, Dh) of the same new positions first .. first + T - 1, in place.
  virtual void rotate_queries_keys(Tape& tape, Tensor& q, Tensor& k, int64_t first) const;
  // The bias of self-attention scores; empty for none.
  virtual ops::AttentionBias attention_bias() const;
};

// Registers the scheme's parameters (if any) under `name` in `store`.
using PositionSchemeFactory = std::unique_ptr<PositionScheme> (*)(ParameterStore& store, const std::string& name,
                                                                  const PositionSchemeOptions& options);

struct PositionSchemeEntry {
  Positions positions;
  PositionSchemeFactory make;
};

const std::vector<PositionSchemeEntry>& position_schemes();
std::unique_ptr<PositionScheme> make_position_scheme(Positions positions, ParameterStore& store,
                                                     const std::string& name, const PositionSchemeOptions& options);

}  // namespace attn::layers
