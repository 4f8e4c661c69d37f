#pragma once
// DecoderState: what a model keeps between decoding steps for each row (sentence x beam
// hypothesis): the Transformer's per-layer key/value caches, the RNN's hidden state and
// projected encoder states. Search only ever asks it to keep or repeat rows, so greedy and
// beam search work for every model family.
#include <cstdint>
#include <vector>

namespace attn::models {

class DecoderState {
 public:
  virtual ~DecoderState() = default;
  // Keeps rows `rows` in that order (a row may repeat): beam expansion and reordering.
  virtual void select_rows(const std::vector<int64_t>& rows) = 0;
  virtual int64_t rows() const = 0;
};

}  // namespace attn::models
