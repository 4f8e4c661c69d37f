// The library's option structs hold no defaults of their own for the fields a config sets: each
// takes its key's declared default (io/config.h). This test fails when one of them drifts, e.g.
// when a literal default comes back.
#include <catch2/catch.hpp>

#include "data/batcher.h"
#include "data/pair_concat.h"
#include "data/training_stream.h"
#include "data/vocab.h"
#include "decode/translator.h"
#include "io/config.h"
#include "layers/transformer_layers.h"
#include "models/rnn_attention.h"
#include "models/transformer.h"
#include "optim/adam.h"
#include "optim/schedule.h"

using namespace attn;

TEST_CASE("decoding options default to the config's decode.*", "[io][config]") {
  const io::Config config;
  const decode::TranslateOptions options;
  const decode::TranslateOptions from_config = decode::translate_options(config);
  CHECK(options.search.beam == from_config.search.beam);
  CHECK(options.search.length_penalty == from_config.search.length_penalty);
  CHECK(options.search.max_len_ratio == from_config.search.max_len_ratio);
  CHECK(options.search.max_len_extra == from_config.search.max_len_extra);
  CHECK(options.search.nbest == from_config.search.nbest);
  CHECK(options.search.min_length == from_config.search.min_length);
  CHECK(options.search.no_repeat_ngram == from_config.search.no_repeat_ngram);
  CHECK(options.search.repetition_penalty == from_config.search.repetition_penalty);
  CHECK(options.prefix == from_config.prefix);
  CHECK(options.search.prefix.empty());  // the config's prefix is text, encoded by the Translator
  CHECK(options.batch_size == from_config.batch_size);
  CHECK(options.batch_tokens == from_config.batch_tokens);
  CHECK(decode::SearchOptions{}.length_penalty == float(config.decode.length_penalty));
}

TEST_CASE("optimizer and schedule options default to the config's train.*", "[io][config]") {
  const io::TrainConfig train;
  const optim::AdamOptions adam;
  CHECK(adam.beta1 == float(train.adam_beta1));
  CHECK(adam.beta2 == float(train.adam_beta2));
  CHECK(adam.epsilon == float(train.adam_epsilon));
  CHECK(adam.weight_decay == float(train.weight_decay));
  const optim::ScheduleOptions schedule;
  CHECK(schedule.type == train.schedule);
  CHECK(schedule.learning_rate == float(train.learning_rate));
  CHECK(schedule.warmup_steps == train.warmup_steps);
  CHECK(schedule.d_model == io::TransformerConfig{}.d_model);  // the default model's schedule width
}

TEST_CASE("data options default to the config's data.* vocab.* and train.*", "[io][config]") {
  const io::Config config;
  const data::BatcherOptions batcher;
  CHECK(batcher.batch_tokens == config.train.batch_tokens);
  CHECK(batcher.pad_multiple == config.train.pad_multiple);
  CHECK(batcher.seed == uint64_t(config.train.seed));
  const data::VocabTrainOptions vocab;
  CHECK(vocab.type == config.vocab.type);
  CHECK(vocab.vocab_size == config.vocab.size);
  CHECK(vocab.character_coverage == float(config.vocab.character_coverage));
  CHECK(vocab.max_sentences == config.vocab.max_sentences);
  CHECK(vocab.seed == uint64_t(config.train.seed));
  const data::StreamOptions stream;
  CHECK(stream.buffer_pairs == config.data.buffer_pairs);
  CHECK(stream.max_len == config.data.max_len);
  CHECK(stream.alignment_level == config.data.train_alignments_level);
  CHECK(stream.concat.prob == config.data.concat_prob);
  CHECK(stream.concat.max_pairs == config.data.concat_max);
}

TEST_CASE("model options default to the config's model.*", "[io][config]") {
  const io::ModelConfig model;
  const io::TransformerConfig& t = model.transformer;
  const models::TransformerOptions transformer;
  CHECK(transformer.layer.width == t.d_model);
  CHECK(transformer.layer.heads == t.heads);
  CHECK(transformer.layer.ffn_width == t.ffn_dim);
  CHECK(transformer.layer.dropout == float(t.dropout));
  CHECK(transformer.layer.attention_dropout == float(t.attention_dropout));
  CHECK(transformer.layer.activation == t.activation);
  CHECK(transformer.layer.pre_norm == (t.norm == Norm::pre));
  CHECK(transformer.encoder_layers == t.encoder_layers);
  CHECK(transformer.decoder_layers == t.decoder_layers);
  CHECK(transformer.max_positions == t.max_positions);
  CHECK(transformer.positions == t.positions);
  CHECK(transformer.shared_embeddings == model.shared_embeddings);
  CHECK(transformer.tied_embeddings == model.tied_embeddings);
  const io::RnnConfig& r = model.rnn;
  const models::RnnAttentionOptions rnn;
  CHECK(rnn.cell == r.cell);
  CHECK(rnn.embedding_dim == r.embedding_dim);
  CHECK(rnn.encoder_hidden == r.encoder_hidden);
  CHECK(rnn.decoder_hidden == r.decoder_hidden);
  CHECK(rnn.attention_dim == r.attention_dim);
  CHECK(rnn.dropout == float(r.dropout));
}
