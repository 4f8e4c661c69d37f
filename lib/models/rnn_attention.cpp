#include "models/rnn_attention.h"

#include <algorithm>

#include "layers/row_gather.h"
#include "ops/activation.h"
#include "ops/concat.h"
#include "ops/masks.h"
#include "ops/matmul.h"

namespace attn::models {

namespace {

constexpr ModelType kFamily = ModelType::rnn;

// The decoding state: s_{t-1} and the encoded source of every row (sentence x beam), which a
// reorder gathers only when a row changes sentence (layers::SourceRows).
struct RnnState : DecoderState {
  layers::RecurrentState state;  // h (R, Hd), and c (R, Hd) for an LSTM
  EncodedSource source;
  layers::SourceRows source_rows;  // (R)

  void select_rows(const std::vector<int64_t>& rows) override {
    state = layers::select_rows(state, rows);
    if (!source_rows.reorder(rows)) return;  // the source side holds the right rows already
    source.states = layers::select_rows(source.states, rows);
    source.keys = layers::select_rows(source.keys, rows);
    source.mask = layers::select_rows(source.mask, rows);
    source.lengths = layers::select_rows(source.lengths, rows);
  }
  int64_t rows() const override { return state.h.dim(0); }
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

RnnAttentionOptions rnn_attention_options(const io::Config& config, const VocabSizes& vocab) {
  const io::RnnConfig& r = config.model.rnn;
  RnnAttentionOptions options;
  set_token_embedding_options(options, config, vocab);
  options.cell = r.cell;
  options.embedding_dim = r.embedding_dim;
  options.encoder_hidden = r.encoder_hidden;
  options.decoder_hidden = r.decoder_hidden;
  options.attention_dim = r.attention_dim;
  options.dropout = static_cast<float>(r.dropout);
  return options;
}

ModelFamily rnn_attention_family() {
  auto no_limit = [](const io::Config&) -> int64_t { return 0; };
  auto decoder_hidden = [](const io::Config& config) -> int64_t { return config.model.rnn.decoder_hidden; };
  return {kFamily, build_model<RnnAttentionModel, rnn_attention_options>, tableless_sequence_length, no_limit,
          decoder_hidden};
}

RnnAttentionModel::RnnAttentionModel(const RnnAttentionOptions& options, ParameterInit init)
    : Seq2SeqModel(choice_name(kFamily), options.target_vocab, init),
      options_(options),
      embeddings_(options, options.embedding_dim) {
  int64_t embedding = options.embedding_dim, encoder = options.encoder_hidden, decoder = options.decoder_hidden;
  auto cell = [&](const std::string& name, int64_t input_size, int64_t hidden_size) {
    return layers::make_recurrent_cell(options.cell, store_, name + choice_name(options.cell), input_size, hidden_size);
  };
  // Registration order fixes the initial parameters of a seed (token_embeddings.h).
  embeddings_.add_source(store_);
  forward_cell_ = cell("encoder.forward_", embedding, encoder);
  backward_cell_ = cell("encoder.backward_", embedding, encoder);
  embeddings_.add_target(store_);
  init_ = layers::Linear(store_, "decoder.init", 2 * encoder, decoder);
  attention_ = layers::AdditiveAttention(store_, "decoder.attention", decoder, 2 * encoder, options.attention_dim);
  decoder_cell_ = cell("decoder.", embedding + 2 * encoder, decoder);
  pre_output_ = layers::Linear(store_, "decoder.pre_output", decoder + 2 * encoder + embedding, embedding);
  embeddings_.add_output(store_);
  store_.finalize();
}

// The forward direction needs no masks: its state at a padded position is never read (attention
// and the mean mask those positions), and padding comes after every real token. The backward
// direction must start at each sentence's last real token, so padded steps keep its state
// (masked_update, of h and c), and it stays exactly 0 until a row's tokens begin. Steps past the
// longest sentence are padding in every row: they are skipped and their states are zeros.
std::vector<Tensor> RnnAttentionModel::run_encoder_direction(Tape& tape, const layers::RecurrentCell& cell,
                                                             const Tensor& embedded,
                                                             const std::vector<int32_t>& lengths, bool reverse) const {
  int64_t batch = embedded.dim(0), length = embedded.dim(1), width = cell.hidden_size();
  int64_t steps = longest(lengths, length);
  int32_t shortest = *std::min_element(lengths.begin(), lengths.end());
  std::vector<Tensor> inputs = time_slices(tape, cell.project_input(tape, embedded), steps);  // steps x (B, G H)
  layers::RecurrentState state = cell.initial_state(Tensor::zeros({batch, width}));           // h (B, H) = 0
  std::vector<Tensor> states(length, state.h);
  for (int64_t i = 0; i < steps; ++i) {
    int64_t t = reverse ? steps - 1 - i : i;
    layers::RecurrentState next = cell.step(tape, inputs[t], state);
    bool some_padded = reverse && t >= shortest;
    state = some_padded ? layers::masked_update(tape, next, state, step_mask(lengths, t, width)) : next;
    states[t] = state.h;
  }
  return states;
}

Tensor RnnAttentionModel::encode(const layers::RunContext& ctx, const data::Batch& batch) const {
  ATTN_CHECK(batch.size >= 1 && static_cast<int64_t>(batch.src_lengths.size()) == batch.size,
             "rnn encoder: a batch of ", batch.size, " sentences with ", batch.src_lengths.size(), " lengths");
  int64_t sentences = batch.size, length = batch.src_len;
  Tensor embedded = ctx.dropout(embeddings_.source()(ctx.tape, batch.src, {sentences, length}), options_.dropout);
  std::vector<Tensor> forward = run_encoder_direction(ctx.tape, *forward_cell_, embedded, batch.src_lengths, false);
  std::vector<Tensor> backward = run_encoder_direction(ctx.tape, *backward_cell_, embedded, batch.src_lengths, true);
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

layers::RecurrentState RnnAttentionModel::initial_state(const layers::RunContext& ctx,
                                                        const EncodedSource& source) const {
  int64_t sentences = source.states.dim(0);
  Tensor weights = mean_weights(source.lengths, source.states.dim(1));  // (B, 1, S)
  ops::MatmulOptions product;
  product.precision = ctx.precision;
  Tensor mean = ops::matmul(ctx.tape, weights, source.states, product);                           // (B, 1, 2H)
  Tensor h = ops::tanh(ctx.tape, init_(ctx.tape, mean.view({sentences, source.states.dim(2)})));  // (B, Hd)
  return decoder_cell_->initial_state(h);                                                         // c_0 = 0
}

RnnAttentionModel::StepOutput RnnAttentionModel::decode_step(const layers::RunContext& ctx, const Tensor& embedded,
                                                             const layers::RecurrentState& state,
                                                             const EncodedSource& source) const {
  Tape& tape = ctx.tape;
  layers::AdditiveAttentionOutput attended =
      attention_(tape, state.h, source.keys, source.states, source.mask, ctx.precision);
  Tensor input = ops::concat(tape, {embedded, attended.context});  // (B, E + 2H)
  return {(*decoder_cell_)(tape, input, state), attended.context, attended.weights};
}

Tensor RnnAttentionModel::output_hidden(const layers::RunContext& ctx, const Tensor& features) const {
  return ops::tanh(ctx.tape, pre_output_(ctx.tape, ctx.dropout(features, options_.dropout)));  // (B, T, E)
}

Tensor RnnAttentionModel::forward(const layers::RunContext& ctx, const data::Batch& batch) const {
  return embeddings_.project(ctx, forward_hidden(ctx, batch).hidden);  // (B, T, V)
}

HiddenStates RnnAttentionModel::forward_hidden(const layers::RunContext& ctx, const data::Batch& batch) const {
  int64_t sentences = batch.size, length = batch.tgt_len, source_length = batch.src_len;
  EncodedSource source = encode_source(ctx, batch);
  layers::RecurrentState state = initial_state(ctx, source);  // s_0
  Tensor embedded = ctx.dropout(embeddings_.target()(ctx.tape, batch.tgt_in, {sentences, length}), options_.dropout);
  // Steps past the longest target only produce logits the loss ignores: they read zeros.
  int64_t steps = longest(batch.tgt_lengths, length);
  std::vector<Tensor> inputs = time_slices(ctx.tape, embedded, length);  // T x (B, E)
  std::vector<Tensor> features;                                          // [s_t, c_t, emb_t] per step
  std::vector<Tensor> rows;                                              // a_t (B, S) per step
  for (int64_t t = 0; t < length; ++t) {
    if (t < steps) {
      StepOutput out = decode_step(ctx, inputs[t], state, source);
      state = out.state;
      features.insert(features.end(), {out.state.h, out.context, inputs[t]});
      rows.push_back(out.weights.detach().view({sentences, source_length}));
    } else {
      Tensor no_context = Tensor::zeros({sentences, source.states.dim(2)});  // (B, 2H)
      features.insert(features.end(), {Tensor::zeros(state.h.shape()), no_context, inputs[t]});
      rows.push_back(Tensor::zeros({sentences, source_length}));
    }
  }
  if (ctx.attention_maps) {
    Tensor map = ops::concat(ctx.tape, rows).view({sentences, 1, length, source_length});  // (B, 1, T, S)
    ctx.attention_maps->add(layers::AttentionKind::cross, 0, map);
  }
  int64_t width = options_.decoder_hidden + 2 * options_.encoder_hidden + options_.embedding_dim;
  Tensor hidden = output_hidden(ctx, ops::concat(ctx.tape, features).view({sentences, length, width}));  // (B, T, E)
  return {hidden, output_projection()};
}

OutputProjection RnnAttentionModel::output_projection() const { return embeddings_.projection(); }

std::unique_ptr<DecoderState> RnnAttentionModel::start(const layers::RunContext& ctx, const data::Batch& batch) const {
  auto state = std::make_unique<RnnState>();
  state->source = encode_source(ctx, batch);
  state->source_rows = layers::SourceRows(batch.size);
  state->state = initial_state(ctx, state->source);
  return state;
}

Tensor RnnAttentionModel::step(const layers::RunContext& ctx, DecoderState& base,
                               const std::vector<int32_t>& previous_tokens) const {
  auto& state = step_state<RnnState>(base, previous_tokens);
  int64_t rows = state.rows();
  Tensor embedded = ctx.dropout(embeddings_.target()(ctx.tape, previous_tokens, {rows}), options_.dropout);  // (R, E)
  StepOutput out = decode_step(ctx, embedded, state.state, state.source);
  state.state = out.state;
  if (ctx.attention_maps) {
    Tensor row = out.weights.detach().view({rows, 1, 1, out.weights.dim(2)});  // (R, 1, 1, S)
    ctx.attention_maps->add(layers::AttentionKind::cross, 0, row);
  }
  Tensor features = ops::concat(ctx.tape, {out.state.h, out.context, embedded});  // (R, Hd + 2H + E)
  Tensor hidden = output_hidden(ctx, features.view({rows, 1, features.dim(1)}));  // (R, 1, E)
  return embeddings_.project(ctx, hidden).view({rows, options_.target_vocab});    // (R, V)
}

}  // namespace attn::models
