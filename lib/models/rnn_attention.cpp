#include "models/rnn_attention.h"

#include <algorithm>

#include "layers/kv_cache.h"
#include "ops/activation.h"
#include "ops/concat.h"
#include "ops/masks.h"
#include "ops/matmul.h"

namespace attn::models {

namespace {

// The decoding state: s_{t-1} and the encoded source of every row (sentence x beam).
struct RnnState : DecoderState {
  Tensor state;  // (R, Hd)
  EncodedSource source;

  void select_rows(const std::vector<int64_t>& rows) override {
    state = layers::select_rows(state, rows);
    source.states = layers::select_rows(source.states, rows);
    source.keys = layers::select_rows(source.keys, rows);
    source.mask = layers::select_rows(source.mask, rows);
    std::vector<int32_t> lengths(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) lengths[i] = source.lengths[rows[i]];
    source.lengths = std::move(lengths);
  }
  int64_t rows() const override { return state.dim(0); }
};

// Steps that hold a real token in at least one row: later steps are padding everywhere.
int64_t longest(const std::vector<int32_t>& lengths, int64_t padded_length) {
  if (lengths.empty()) return padded_length;
  return std::min<int64_t>(*std::max_element(lengths.begin(), lengths.end()), padded_length);
}

// (B, H): 1 on rows with a real token at step t, 0 on rows already in their padding.
Tensor step_mask(const std::vector<int32_t>& lengths, int64_t t, int64_t width) {
  int64_t batch = static_cast<int64_t>(lengths.size());
  Tensor mask = Tensor::empty({batch, width});  // (B, H)
  float* values = mask.data();
  for (int64_t b = 0; b < batch; ++b)
    std::fill(values + b * width, values + (b + 1) * width, t < lengths[b] ? 1.f : 0.f);
  return mask;
}

// (B, 1, S): 1 / length on real positions, 0 on padding, so weights x states is the mean.
Tensor mean_weights(const std::vector<int32_t>& lengths, int64_t length) {
  int64_t batch = static_cast<int64_t>(lengths.size());
  Tensor weights = Tensor::zeros({batch, 1, length});  // (B, 1, S)
  float* values = weights.data();
  for (int64_t b = 0; b < batch; ++b)
    std::fill(values + b * length, values + b * length + lengths[b], 1.f / float(lengths[b]));
  return weights;
}

// x (B, T, D) -> its first `steps` time slices, (B, D) each (a split of the (B, T * D) view).
std::vector<Tensor> time_slices(Tape& tape, const Tensor& x, int64_t steps) {
  int64_t batch = x.dim(0), length = x.dim(1), width = x.dim(2);
  std::vector<int64_t> sizes(steps, width);
  if (steps < length) sizes.push_back((length - steps) * width);  // the all-padding tail, unused
  std::vector<Tensor> slices = ops::split(tape, x.view({batch, length * width}), sizes);
  slices.resize(steps);
  return slices;
}

}  // namespace

RnnAttentionModel::RnnAttentionModel(const RnnAttentionOptions& options, uint64_t seed)
    : Seq2SeqModel(seed), options_(options) {
  int64_t embedding = options.embedding_dim, encoder = options.encoder_hidden, decoder = options.decoder_hidden;
  ATTN_CHECK(!options.shared_embeddings || options.source_vocab == options.target_vocab,
             "shared embeddings need one vocabulary, got ", options.source_vocab, " and ", options.target_vocab);
  source_embedding_ = layers::Embedding(store_, options.shared_embeddings ? "embedding" : "encoder.embedding",
                                        options.source_vocab, embedding, options.padding_id);
  forward_gru_ = layers::GruCell(store_, "encoder.forward_gru", embedding, encoder);
  backward_gru_ = layers::GruCell(store_, "encoder.backward_gru", embedding, encoder);
  target_embedding_ = options.shared_embeddings ? source_embedding_
                                                : layers::Embedding(store_, "decoder.embedding", options.target_vocab,
                                                                    embedding, options.padding_id);
  init_ = layers::Linear(store_, "decoder.init", 2 * encoder, decoder);
  attention_ = layers::AdditiveAttention(store_, "decoder.attention", decoder, 2 * encoder, options.attention_dim);
  decoder_gru_ = layers::GruCell(store_, "decoder.gru", embedding + 2 * encoder, decoder);
  pre_output_ = layers::Linear(store_, "decoder.pre_output", decoder + 2 * encoder + embedding, embedding);
  if (!options.tied_embeddings)
    output_ = layers::Linear(store_, "decoder.output", embedding, options.target_vocab, false);
  store_.finalize();
}

// The forward direction needs no masks: its state at a padded position is never read (attention
// and the mean mask those positions), and padding comes after every real token. The backward
// direction must start at each sentence's last real token, so padded steps keep its state
// (masked_update), and it stays exactly 0 until a row's tokens begin. Steps past the longest
// sentence are padding in every row: they are skipped and their states are zeros.
std::vector<Tensor> RnnAttentionModel::run_encoder_direction(Tape& tape, const layers::GruCell& cell,
                                                             const Tensor& embedded,
                                                             const std::vector<int32_t>& lengths, bool reverse) const {
  int64_t batch = embedded.dim(0), length = embedded.dim(1), width = cell.hidden_size();
  int64_t steps = longest(lengths, length);
  int32_t shortest = *std::min_element(lengths.begin(), lengths.end());
  std::vector<Tensor> inputs = time_slices(tape, cell.project_input(tape, embedded), steps);  // steps x (B, 3H)
  Tensor zeros = Tensor::zeros({batch, width});                                               // (B, H)
  std::vector<Tensor> states(length, zeros);
  Tensor h = zeros;  // (B, H)
  for (int64_t i = 0; i < steps; ++i) {
    int64_t t = reverse ? steps - 1 - i : i;
    Tensor h_new = cell.step(tape, inputs[t], h);  // (B, H)
    bool some_padded = reverse && t >= shortest;
    h = some_padded ? layers::masked_update(tape, h_new, h, step_mask(lengths, t, width)) : h_new;
    states[t] = h;
  }
  return states;
}

Tensor RnnAttentionModel::encode(const layers::RunContext& ctx, const data::Batch& batch) const {
  ATTN_CHECK(batch.size >= 1 && static_cast<int64_t>(batch.src_lengths.size()) == batch.size,
             "rnn encoder: a batch of ", batch.size, " sentences with ", batch.src_lengths.size(), " lengths");
  int64_t sentences = batch.size, length = batch.src_len;
  Tensor embedded = ctx.dropout(source_embedding_(ctx.tape, batch.src, {sentences, length}), options_.dropout);
  std::vector<Tensor> forward = run_encoder_direction(ctx.tape, forward_gru_, embedded, batch.src_lengths, false);
  std::vector<Tensor> backward = run_encoder_direction(ctx.tape, backward_gru_, embedded, batch.src_lengths, true);
  std::vector<Tensor> parts;  // [fwd_0, bwd_0, fwd_1, bwd_1, ...]: row-major (B, S, 2H) once joined
  for (int64_t t = 0; t < length; ++t) {
    parts.push_back(forward[t]);
    parts.push_back(backward[t]);
  }
  return ops::concat(ctx.tape, parts).view({sentences, length, 2 * options_.encoder_hidden});  // (B, S, 2H)
}

EncodedSource RnnAttentionModel::encode_source(const layers::RunContext& ctx, const data::Batch& batch) const {
  EncodedSource source;
  source.states = encode(ctx, batch);                                     // (B, S, 2H)
  source.keys = attention_.project_keys(ctx.tape, source.states);         // (B, S, A)
  source.mask = ops::key_padding_mask(batch.src_lengths, batch.src_len);  // (B, 1, S)
  source.lengths = batch.src_lengths;
  return source;
}

Tensor RnnAttentionModel::initial_state(Tape& tape, const EncodedSource& source) const {
  int64_t sentences = source.states.dim(0);
  Tensor weights = mean_weights(source.lengths, source.states.dim(1));                // (B, 1, S)
  Tensor mean = ops::matmul(tape, weights, source.states);                            // (B, 1, 2H)
  return ops::tanh(tape, init_(tape, mean.view({sentences, source.states.dim(2)})));  // (B, Hd)
}

RnnAttentionModel::StepOutput RnnAttentionModel::decode_step(Tape& tape, const Tensor& embedded, const Tensor& state,
                                                             const EncodedSource& source) const {
  layers::AdditiveAttentionOutput attended = attention_(tape, state, source.keys, source.states, source.mask);
  Tensor input = ops::concat(tape, {embedded, attended.context});  // (B, E + 2H)
  return {decoder_gru_(tape, input, state), attended.context, attended.weights};
}

Tensor RnnAttentionModel::output_logits(const layers::RunContext& ctx, const Tensor& features) const {
  Tensor hidden = ops::tanh(ctx.tape, pre_output_(ctx.tape, ctx.dropout(features, options_.dropout)));  // (B, T, E)
  if (!options_.tied_embeddings) return output_(ctx.tape, hidden);
  return ops::matmul(ctx.tape, hidden, target_embedding_.table(), {false, true, 1.f});  // (B, T, E) x (V, E)^T
}

Tensor RnnAttentionModel::forward(const layers::RunContext& ctx, const data::Batch& batch) const {
  int64_t sentences = batch.size, length = batch.tgt_len, source_length = batch.src_len;
  EncodedSource source = encode_source(ctx, batch);
  Tensor state = initial_state(ctx.tape, source);  // (B, Hd)
  Tensor embedded = ctx.dropout(target_embedding_(ctx.tape, batch.tgt_in, {sentences, length}), options_.dropout);
  // Steps past the longest target only produce logits the loss ignores: they read zeros.
  int64_t steps = longest(batch.tgt_lengths, length);
  std::vector<Tensor> inputs = time_slices(ctx.tape, embedded, length);  // T x (B, E)
  std::vector<Tensor> features;                                          // [s_t, c_t, emb_t] per step
  std::vector<Tensor> rows;                                              // a_t (B, S) per step
  for (int64_t t = 0; t < length; ++t) {
    if (t < steps) {
      StepOutput out = decode_step(ctx.tape, inputs[t], state, source);
      state = out.state;
      features.insert(features.end(), {out.state, out.context, inputs[t]});
      rows.push_back(out.weights.detach().view({sentences, source_length}));
    } else {
      Tensor no_context = Tensor::zeros({sentences, source.states.dim(2)});  // (B, 2H)
      features.insert(features.end(), {Tensor::zeros(state.shape()), no_context, inputs[t]});
      rows.push_back(Tensor::zeros({sentences, source_length}));
    }
  }
  if (ctx.attention_maps) {
    Tensor map = ops::concat(ctx.tape, rows).view({sentences, 1, length, source_length});  // (B, 1, T, S)
    ctx.attention_maps->add(layers::AttentionKind::cross, 0, map);
  }
  int64_t width = options_.decoder_hidden + 2 * options_.encoder_hidden + options_.embedding_dim;
  return output_logits(ctx, ops::concat(ctx.tape, features).view({sentences, length, width}));  // (B, T, V)
}

std::unique_ptr<DecoderState> RnnAttentionModel::start(const layers::RunContext& ctx,
                                                               const data::Batch& batch) const {
  auto state = std::make_unique<RnnState>();
  state->source = encode_source(ctx, batch);
  state->state = initial_state(ctx.tape, state->source);
  return state;
}

Tensor RnnAttentionModel::step(const layers::RunContext& ctx, DecoderState& base,
                               const std::vector<int32_t>& previous_tokens) const {
  auto& state = static_cast<RnnState&>(base);
  int64_t rows = state.rows();
  ATTN_CHECK(static_cast<int64_t>(previous_tokens.size()) == rows, "step: ", previous_tokens.size(), " tokens for ",
             rows, " rows");
  Tensor embedded = ctx.dropout(target_embedding_(ctx.tape, previous_tokens, {rows}), options_.dropout);  // (R, E)
  StepOutput out = decode_step(ctx.tape, embedded, state.state, state.source);
  state.state = out.state;
  if (ctx.attention_maps) {
    Tensor row = out.weights.detach().view({rows, 1, 1, out.weights.dim(2)});  // (R, 1, 1, S)
    ctx.attention_maps->add(layers::AttentionKind::cross, 0, row);
  }
  Tensor features = ops::concat(ctx.tape, {out.state, out.context, embedded});  // (R, Hd + 2H + E)
  return output_logits(ctx, features.view({rows, 1, features.dim(1)})).view({rows, options_.target_vocab});  // (R, V)
}

}  // namespace attn::models
