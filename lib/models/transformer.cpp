#include "models/transformer.h"

#include <cmath>

#include "layers/row_gather.h"
#include "ops/activation.h"
#include "ops/scale.h"

namespace attn::models {

namespace {

constexpr ModelType kFamily = ModelType::transformer;

// The decoding state: one cache per decoder layer, the batch's masks, the next position.
// A reorder rewrites the self-attention caches' lineages (no key moves); the memory caches
// never copy (their row maps point each row at its sentence), and they and the masks' source
// lengths change only when a row changes sentence (layers::SourceRows).
struct TransformerState : DecoderState {
  std::vector<layers::DecoderLayerCache> layers;
  layers::DecoderMasks masks;      // masks.memory.key_lengths (R)
  layers::SourceRows source_rows;  // (R)
  int64_t position = 0;

  void select_rows(const std::vector<int64_t>& rows) override {
    bool source_moved = source_rows.reorder(rows);
    for (auto& cache : layers) {
      cache.self.select_rows(rows);
      if (source_moved) cache.memory.select_rows(rows);
    }
    if (source_moved) masks.memory.key_lengths = layers::select_rows(masks.memory.key_lengths, rows);
  }
  int64_t rows() const override { return source_rows.size(); }
};

}  // namespace

TransformerOptions transformer_options(const io::Config& config, const VocabSizes& vocab) {
  const io::TransformerConfig& t = config.model.transformer;
  TransformerOptions options;
  set_token_embedding_options(options, config, vocab);
  options.layer.width = t.d_model;
  options.layer.heads = t.heads;
  options.layer.ffn_width = t.ffn_dim;
  options.layer.dropout = static_cast<float>(t.dropout);
  options.layer.attention_dropout = static_cast<float>(t.attention_dropout);
  options.layer.activation = t.activation;
  options.layer.pre_norm = t.norm == Norm::pre;
  options.encoder_layers = t.encoder_layers;
  options.decoder_layers = t.decoder_layers;
  options.max_positions = t.max_positions;
  options.positions = t.positions;
  return options;
}

ModelFamily transformer_family() {
  auto max_sequence_length = [](const io::Config& config) -> int64_t {
    const io::TransformerConfig& t = config.model.transformer;
    return has_position_table(t.positions) ? int64_t(t.max_positions) : tableless_sequence_length(config);
  };
  auto position_limit = [](const io::Config& config) -> int64_t {
    const io::TransformerConfig& t = config.model.transformer;
    return has_position_table(t.positions) ? int64_t(t.max_positions) : 0;
  };
  auto d_model = [](const io::Config& config) -> int64_t { return config.model.transformer.d_model; };
  return {kFamily, build_model<TransformerModel, transformer_options>, max_sequence_length, position_limit, d_model};
}

TransformerModel::TransformerModel(const TransformerOptions& options, ParameterInit init)
    : Seq2SeqModel(choice_name(kFamily), options.target_vocab, init),
      options_(options),
      embeddings_(options, options.layer.width) {
  int64_t width = options.layer.width;
  // Registration order fixes the initial parameters of a seed (token_embeddings.h).
  embeddings_.add_source(store_);
  embeddings_.add_target(store_);
  positions_ = layers::make_position_scheme(options.positions, store_, "positions",
                                            {options.max_positions, width, options.layer.heads});
  for (int i = 0; i < options.encoder_layers; ++i)
    encoder_.emplace_back(store_, "encoder.layers." + std::to_string(i), options.layer, i, positions_.get());
  for (int i = 0; i < options.decoder_layers; ++i)
    decoder_.emplace_back(store_, "decoder.layers." + std::to_string(i), options.layer, i, positions_.get());
  if (options.layer.pre_norm) {
    encoder_norm_ = layers::LayerNorm(store_, "encoder.final_norm", width);
    decoder_norm_ = layers::LayerNorm(store_, "decoder.final_norm", width);
  }
  embeddings_.add_output(store_);
  store_.finalize();
}

Tensor TransformerModel::embed(const layers::RunContext& ctx, const layers::Embedding& table,
                               const std::vector<int32_t>& ids, int64_t batch, int64_t length,
                               int64_t first_position) const {
  float scale = std::sqrt(static_cast<float>(options_.layer.width));
  Tensor tokens = ops::scale(ctx.tape, table(ctx.tape, ids, {batch, length}), scale);  // (B, T, D)
  return ctx.dropout(positions_->embed(ctx.tape, tokens, first_position), options_.layer.dropout);
}

ops::AttentionMask TransformerModel::encoder_mask(const std::vector<int32_t>& source_lengths) const {
  return {source_lengths, false, positions_->attention_bias()};
}

layers::DecoderMasks TransformerModel::decoder_masks(const std::vector<int32_t>& source_lengths) const {
  return {ops::AttentionMask::causal_mask(positions_->attention_bias()), ops::AttentionMask::padding(source_lengths)};
}

Tensor TransformerModel::encode(const layers::RunContext& ctx, const data::Batch& batch) const {
  Tensor x = embed(ctx, embeddings_.source(), batch.src, batch.size, batch.src_len, 0);  // (B, S, D)
  const ops::AttentionMask mask = encoder_mask(batch.src_lengths);
  for (const auto& layer : encoder_) x = layer(ctx, x, mask);
  return options_.layer.pre_norm ? encoder_norm_(ctx.tape, x) : x;
}

HiddenStates TransformerModel::forward_hidden(const layers::RunContext& ctx, const data::Batch& batch) const {
  Tensor memory = encode(ctx, batch);                                                       // (B, S, D)
  Tensor y = embed(ctx, embeddings_.target(), batch.tgt_in, batch.size, batch.tgt_len, 0);  // (B, T, D)
  const layers::DecoderMasks masks = decoder_masks(batch.src_lengths);
  for (const auto& layer : decoder_) y = layer(ctx, y, memory, masks);
  if (options_.layer.pre_norm) y = decoder_norm_(ctx.tape, y);
  return {y, output_projection()};
}

OutputProjection TransformerModel::output_projection() const { return embeddings_.projection(); }

Tensor TransformerModel::forward(const layers::RunContext& ctx, const data::Batch& batch) const {
  return embeddings_.project(ctx, forward_hidden(ctx, batch).hidden);  // (B, T, V)
}

std::unique_ptr<DecoderState> TransformerModel::start(const layers::RunContext& ctx, const data::Batch& batch) const {
  Tensor memory = encode(ctx, batch);  // (B, S, D)
  auto state = std::make_unique<TransformerState>();
  state->masks = decoder_masks(batch.src_lengths);
  state->source_rows = layers::SourceRows(batch.size);
  for (const auto& layer : decoder_) state->layers.push_back({layers::KvCache{}, layer.project_memory(ctx, memory)});
  return state;
}

Tensor TransformerModel::step(const layers::RunContext& ctx, DecoderState& base,
                              const std::vector<int32_t>& previous_tokens) const {
  auto& state = step_state<TransformerState>(base, previous_tokens);
  int64_t rows = state.rows();
  Tensor y = embed(ctx, embeddings_.target(), previous_tokens, rows, 1, state.position);  // (R, 1, D)
  for (size_t i = 0; i < decoder_.size(); ++i) y = decoder_[i].step(ctx, y, state.layers[i], state.masks);
  if (options_.layer.pre_norm) y = decoder_norm_(ctx.tape, y);
  ++state.position;
  return embeddings_.project(ctx, y).view({rows, options_.target_vocab});  // (R, V)
}

}  // namespace attn::models
