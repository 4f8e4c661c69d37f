#include "models/model_factory.h"

#include "data/vocab.h"
#include "models/rnn_attention.h"
#include "models/transformer.h"

namespace attn::models {

namespace {

TransformerOptions transformer_options(const io::Config& config, const VocabSizes& vocab) {
  const io::TransformerConfig& t = config.model.transformer;
  TransformerOptions options;
  options.source_vocab = vocab.source;
  options.target_vocab = vocab.target;
  options.layer.width = t.d_model;
  options.layer.heads = t.heads;
  options.layer.ffn_width = t.ffn_dim;
  options.layer.dropout = static_cast<float>(t.dropout);
  options.layer.attention_dropout = static_cast<float>(t.attention_dropout);
  options.layer.activation = ops::parse_activation(t.activation);
  options.layer.pre_norm = t.norm == "pre";
  options.encoder_layers = t.encoder_layers;
  options.decoder_layers = t.decoder_layers;
  options.max_positions = t.max_positions;
  options.learned_positions = t.positions == "learned";
  options.shared_embeddings = config.model.shared_embeddings;
  options.tied_embeddings = config.model.tied_embeddings;
  options.padding_id = data::kPadId;
  return options;
}

RnnAttentionOptions rnn_options(const io::Config& config, const VocabSizes& vocab) {
  const io::RnnConfig& r = config.model.rnn;
  ATTN_CHECK(r.cell == "gru", "model.rnn.cell \"", r.cell, "\" is not implemented; use \"gru\"");
  RnnAttentionOptions options;
  options.source_vocab = vocab.source;
  options.target_vocab = vocab.target;
  options.embedding_dim = r.embedding_dim;
  options.encoder_hidden = r.encoder_hidden;
  options.decoder_hidden = r.decoder_hidden;
  options.attention_dim = r.attention_dim;
  options.dropout = static_cast<float>(r.dropout);
  options.shared_embeddings = config.model.shared_embeddings;
  options.tied_embeddings = config.model.tied_embeddings;
  options.padding_id = data::kPadId;
  return options;
}

}  // namespace

std::unique_ptr<Seq2SeqModel> make_model(const io::Config& config, const VocabSizes& vocab) {
  uint64_t seed = static_cast<uint64_t>(config.train.seed);
  if (config.model.type == "transformer")
    return std::make_unique<TransformerModel>(transformer_options(config, vocab), seed);
  if (config.model.type == "rnn") return std::make_unique<RnnAttentionModel>(rnn_options(config, vocab), seed);
  ATTN_CHECK(false, "model.type \"", config.model.type, "\" is not available yet");
}

int64_t max_sequence_length(const io::Config& config) {
  if (config.model.type == "transformer") return config.model.transformer.max_positions;
  return 4 * int64_t(config.data.max_len);
}

int64_t schedule_width(const io::Config& config) { return config.model.transformer.d_model; }

}  // namespace attn::models
