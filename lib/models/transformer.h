#pragma once
// The Transformer encoder-decoder (Vaswani et al. 2017): token embedding * sqrt(D) (+ positions),
// N encoder layers (self-attention, FFN), M decoder layers (causal self-attention,
// cross-attention, FFN), output projection (tied to the target embedding as an option).
// Incremental decoding keeps each decoder layer's keys and values (TransformerState).
//
// Shapes: B sentences, S source length, T target length, D width, V vocabulary.
#include <memory>
#include <vector>

#include "io/config.h"
#include "layers/positions.h"
#include "layers/transformer_layers.h"
#include "models/model_family.h"
#include "models/seq2seq_model.h"
#include "models/token_embeddings.h"

namespace attn::models {

// Vocabularies and embedding sharing come from TokenEmbeddingOptions.
struct TransformerOptions : TokenEmbeddingOptions {
  layers::TransformerLayerOptions layer;
  // model.transformer's declared defaults (io/config.h).
  int encoder_layers = io::defaults<io::TransformerConfig>().encoder_layers;
  int decoder_layers = io::defaults<io::TransformerConfig>().decoder_layers;
  // The table's rows (sinusoidal, learned); unused by rotary, alibi.
  int64_t max_positions = io::defaults<io::TransformerConfig>().max_positions;
  Positions positions = io::defaults<io::TransformerConfig>().positions;  // the scheme (layers::position_schemes())
};

// The options of model.transformer and the model-wide embedding keys, for `vocab`.
TransformerOptions transformer_options(const io::Config& config, const VocabSizes& vocab);
// Its entry in the family table: model.type "transformer"; with a position table (sinusoidal,
// learned) the longest sequence and the position limit are model.transformer.max_positions
// (the table's size); with relative positions (rotary, alibi) there is no position limit and
// decoding takes up to 4 x data.max_len tokens (tableless_sequence_length), as an RNN does. The
// schedule width is d_model.
ModelFamily transformer_family();

class TransformerModel : public Seq2SeqModel {
 public:
  TransformerModel(const TransformerOptions& options, ParameterInit init);

  Tensor forward(const layers::RunContext& ctx, const data::Batch& batch) const override;
  HiddenStates forward_hidden(const layers::RunContext& ctx, const data::Batch& batch) const override;
  OutputProjection output_projection() const override;
  std::unique_ptr<DecoderState> start(const layers::RunContext& ctx, const data::Batch& batch) const override;
  Tensor step(const layers::RunContext& ctx, DecoderState& state,
              const std::vector<int32_t>& previous_tokens) const override;

  // Encoder output (B, S, D).
  Tensor encode(const layers::RunContext& ctx, const data::Batch& batch) const;

 private:
  // The masks of a batch, built once: the source's padding (+ the scheme's bias) for the
  // encoder, causal (+ bias) for the decoder's self-attention, the padding for cross-attention.
  ops::AttentionMask encoder_mask(const std::vector<int32_t>& source_lengths) const;
  layers::DecoderMasks decoder_masks(const std::vector<int32_t>& source_lengths) const;
  // embedding(ids) * sqrt(D) + positions, then dropout: (B, T) -> (B, T, D).
  Tensor embed(const layers::RunContext& ctx, const layers::Embedding& table, const std::vector<int32_t>& ids,
               int64_t batch, int64_t length, int64_t first_position) const;

  TransformerOptions options_;
  TokenEmbeddings embeddings_;
  // Held by pointer: the layers keep its address.
  std::unique_ptr<layers::PositionScheme> positions_;
  std::vector<layers::TransformerEncoderLayer> encoder_;
  std::vector<layers::TransformerDecoderLayer> decoder_;
  layers::LayerNorm encoder_norm_, decoder_norm_;  // pre-norm only
};

}  // namespace attn::models
