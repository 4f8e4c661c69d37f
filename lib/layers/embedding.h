#pragma once
// Embedding: a (V, D) table looked up by token id; the padding id's row gets no gradient.
// The table doubles as the output projection when embeddings are tied (logits = h E^T).
//
// Shapes: ids (B, T) -> (B, T, D).
#include <memory>
#include <string>
#include <vector>

#include "core/parameter_store.h"
#include "layers/run_context.h"

namespace attn::layers {

class Embedding {
 public:
  Embedding() = default;
  // N(0, D^-1/2) initialisation (as fairseq's Transformer), so that the sqrt(D) scaling of the
  // Transformer gives unit-variance inputs.
  Embedding(ParameterStore& store, const std::string& name, int64_t vocab_size, int64_t width, int32_t padding_id);

  // The output projection's forms of this table (tied embeddings): once a decoding store has
  // dropped the table's own values (ParameterStore::prepare_for_decoding), lookups read its packed
  // copy.
  void tie(std::shared_ptr<const MatmulWeight> output) { tied_ = std::move(output); }

  Tensor operator()(Tape& tape, const std::vector<int32_t>& ids, const Shape& ids_shape) const;
  const Tensor& table() const { return table_; }
  int64_t width() const { return table_.dim(1); }

 private:
  Tensor table_;  // (V, D)
  std::shared_ptr<const MatmulWeight> tied_;
  int32_t padding_id_ = -1;
};

}  // namespace attn::layers
