#include "models/transformer.h"

#include <cmath>

#include "ops/add.h"
#include "ops/matmul.h"
#include "ops/scale.h"

namespace attn::models {

namespace {

// The decoding state: one cache per decoder layer, the source lengths, the next position.
struct TransformerState : DecoderState {
  std::vector<layers::DecoderLayerCache> layers;
  std::vector<int32_t> memory_lengths;  // (R)
  int64_t position = 0;

  void select_rows(const std::vector<int64_t>& rows) override {
    for (auto& cache : layers) {
      cache.self.select_rows(rows);
      cache.memory.select_rows(rows);
    }
    std::vector<int32_t> lengths(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) lengths[i] = memory_lengths[rows[i]];
    memory_lengths = std::move(lengths);
  }
  int64_t rows() const override { return static_cast<int64_t>(memory_lengths.size()); }
};

}  // namespace

TransformerModel::TransformerModel(const TransformerOptions& options, uint64_t seed)
    : Seq2SeqModel(seed), options_(options) {
  int64_t width = options.layer.width;
  ATTN_CHECK(!options.shared_embeddings || options.source_vocab == options.target_vocab,
             "shared embeddings need one vocabulary, got ", options.source_vocab, " and ", options.target_vocab);
  source_embedding_ = layers::Embedding(store_, options.shared_embeddings ? "embedding" : "encoder.embedding",
                                        options.source_vocab, width, options.padding_id);
  target_embedding_ = options.shared_embeddings ? source_embedding_
                                                : layers::Embedding(store_, "decoder.embedding", options.target_vocab,
                                                                    width, options.padding_id);
  positions_ = layers::PositionalEncoding(store_, "positions", options.max_positions, width, options.learned_positions);
  for (int i = 0; i < options.encoder_layers; ++i)
    encoder_.emplace_back(store_, "encoder.layers." + std::to_string(i), options.layer, i);
  for (int i = 0; i < options.decoder_layers; ++i)
    decoder_.emplace_back(store_, "decoder.layers." + std::to_string(i), options.layer, i);
  if (options.layer.pre_norm) {
    encoder_norm_ = layers::LayerNorm(store_, "encoder.final_norm", width);
    decoder_norm_ = layers::LayerNorm(store_, "decoder.final_norm", width);
  }
  if (!options.tied_embeddings) output_ = layers::Linear(store_, "decoder.output", width, options.target_vocab, false);
  store_.finalize();
}

Tensor TransformerModel::embed(const layers::RunContext& ctx, const layers::Embedding& table,
                               const std::vector<int32_t>& ids, int64_t batch, int64_t length,
                               int64_t first_position) const {
  float scale = std::sqrt(static_cast<float>(options_.layer.width));
  Tensor tokens = ops::scale(ctx.tape, table(ctx.tape, ids, {batch, length}), scale);  // (B, T, D)
  Tensor positions = positions_(ctx.tape, first_position, length);                     // (T, D)
  return ctx.dropout(ops::add(ctx.tape, tokens, positions), options_.layer.dropout);
}

Tensor TransformerModel::project(Tape& tape, const Tensor& hidden) const {
  if (!options_.tied_embeddings) return output_(tape, hidden);
  return ops::matmul(tape, hidden, target_embedding_.table(), {false, true, 1.f});  // (..., D) x (V, D)^T
}

Tensor TransformerModel::encode(const layers::RunContext& ctx, const data::Batch& batch) const {
  Tensor x = embed(ctx, source_embedding_, batch.src, batch.size, batch.src_len, 0);  // (B, S, D)
  for (const auto& layer : encoder_) x = layer(ctx, x, batch.src_lengths);
  return options_.layer.pre_norm ? encoder_norm_(ctx.tape, x) : x;
}

Tensor TransformerModel::forward(const layers::RunContext& ctx, const data::Batch& batch) const {
  Tensor memory = encode(ctx, batch);                                                    // (B, S, D)
  Tensor y = embed(ctx, target_embedding_, batch.tgt_in, batch.size, batch.tgt_len, 0);  // (B, T, D)
  for (const auto& layer : decoder_) y = layer(ctx, y, memory, batch.src_lengths);
  if (options_.layer.pre_norm) y = decoder_norm_(ctx.tape, y);
  return project(ctx.tape, y);  // (B, T, V)
}

std::unique_ptr<DecoderState> TransformerModel::start(const layers::RunContext& ctx,
                                                              const data::Batch& batch) const {
  Tensor memory = encode(ctx, batch);  // (B, S, D)
  auto state = std::make_unique<TransformerState>();
  state->memory_lengths = batch.src_lengths;
  for (const auto& layer : decoder_) state->layers.push_back({layers::KvCache{}, layer.project_memory(ctx, memory)});
  return state;
}

Tensor TransformerModel::step(const layers::RunContext& ctx, DecoderState& base,
                              const std::vector<int32_t>& previous_tokens) const {
  auto& state = static_cast<TransformerState&>(base);
  int64_t rows = state.rows();
  ATTN_CHECK(static_cast<int64_t>(previous_tokens.size()) == rows, "step: ", previous_tokens.size(), " tokens for ",
             rows, " rows");
  Tensor y = embed(ctx, target_embedding_, previous_tokens, rows, 1, state.position);  // (R, 1, D)
  for (size_t i = 0; i < decoder_.size(); ++i) y = decoder_[i].step(ctx, y, state.layers[i], state.memory_lengths);
  if (options_.layer.pre_norm) y = decoder_norm_(ctx.tape, y);
  ++state.position;
  return project(ctx.tape, y).view({rows, options_.target_vocab});  // (R, V)
}

}  // namespace attn::models
