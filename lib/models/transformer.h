#pragma once
// The Transformer encoder-decoder (Vaswani et al. 2017): token embedding * sqrt(D) + positions,
// N encoder layers (self-attention, FFN), M decoder layers (causal self-attention,
// cross-attention, FFN), output projection (tied to the target embedding as an option).
// Incremental decoding keeps each decoder layer's keys and values (TransformerState).
//
// Shapes: B sentences, S source length, T target length, D width, V vocabulary.
#include <memory>
#include <vector>

#include "layers/embedding.h"
#include "layers/linear.h"
#include "layers/positional_encoding.h"
#include "layers/transformer_layers.h"
#include "models/seq2seq_model.h"

namespace attn::models {

struct TransformerOptions {
  int64_t source_vocab = 8000;
  int64_t target_vocab = 8000;
  layers::TransformerLayerOptions layer;
  int encoder_layers = 3;
  int decoder_layers = 3;
  int64_t max_positions = 256;
  bool learned_positions = false;
  bool shared_embeddings = true;  // one table for source and target (needs one vocabulary)
  bool tied_embeddings = true;    // output projection = target embedding^T
  int32_t padding_id = 0;
};

class TransformerModel : public Seq2SeqModel {
 public:
  TransformerModel(const TransformerOptions& options, uint64_t seed);

  Tensor forward(const layers::RunContext& ctx, const data::Batch& batch) const override;
  std::unique_ptr<DecoderState> start(const layers::RunContext& ctx, const data::Batch& batch) const override;
  Tensor step(const layers::RunContext& ctx, DecoderState& state,
              const std::vector<int32_t>& previous_tokens) const override;
  int64_t target_vocab_size() const override { return options_.target_vocab; }
  std::string family() const override { return "transformer"; }

  // Encoder output (B, S, D).
  Tensor encode(const layers::RunContext& ctx, const data::Batch& batch) const;

 private:
  // embedding(ids) * sqrt(D) + positions, then dropout: (B, T) -> (B, T, D).
  Tensor embed(const layers::RunContext& ctx, const layers::Embedding& table, const std::vector<int32_t>& ids,
               int64_t batch, int64_t length, int64_t first_position) const;
  Tensor project(Tape& tape, const Tensor& hidden) const;  // (..., D) -> (..., V)

  TransformerOptions options_;
  layers::Embedding source_embedding_, target_embedding_;
  layers::PositionalEncoding positions_;
  std::vector<layers::TransformerEncoderLayer> encoder_;
  std::vector<layers::TransformerDecoderLayer> decoder_;
  layers::LayerNorm encoder_norm_, decoder_norm_;  // pre-norm only
  layers::Linear output_;                          // untied only
};

}  // namespace attn::models
