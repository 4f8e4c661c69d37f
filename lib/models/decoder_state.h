#pragma once
// DecoderState: what a model keeps between decoding steps for each row (sentence x beam
// hypothesis): the Transformer's per-layer key/value caches, the RNN's hidden state and
// projected encoder states. Search only ever asks it to keep or repeat rows, so greedy and
// beam search work for every model family.
#include <cstdint>
#include <vector>

#include "core/check.h"

namespace attn::models {

class DecoderState {
 public:
  virtual ~DecoderState() = default;
  // Keeps rows `rows` in that order (a row may repeat): beam expansion and reordering.
  virtual void select_rows(const std::vector<int64_t>& rows) = 0;
  virtual int64_t rows() const = 0;
};

// The state a model's step() was given, as that model's own State type, after the checks every
// step() needs: the state comes from this kind of model, and there is one previous token per row.
template <class State>
State& step_state(DecoderState& state, const std::vector<int32_t>& previous_tokens) {
  auto* own = dynamic_cast<State*>(&state);
  ATTN_CHECK(own != nullptr, "step: the decoder state was started by another kind of model");
  ATTN_CHECK(static_cast<int64_t>(previous_tokens.size()) == own->rows(), "step: ", previous_tokens.size(),
             " tokens for ", own->rows(), " rows");
  return *own;
}

}  // namespace attn::models
