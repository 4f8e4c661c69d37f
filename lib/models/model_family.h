#pragma once
// ModelFamily: what attn needs to know about one model family (one value of model.type) besides
// the Seq2SeqModel interface: how to build it from a config, the longest sequence it decodes,
// and its width for learning-rate schedules. Each family defines its entry in its own file
// (transformer.cpp, rnn_attention.cpp), next to its options-from-config code; the one table of
// entries is model_families() (model_factory.cpp), and model_factory.h the API on top.
// A family's hyperparameters stay in its section of io/config.h (model.transformer, model.rnn).
#include <cstdint>
#include <memory>
#include <string>

#include "io/config.h"
#include "models/seq2seq_model.h"

namespace attn::models {

struct VocabSizes {
  int64_t source = 0;
  int64_t target = 0;
};

struct ModelFamily {
  ModelType type;  // its model.type; choice_name(type) is Seq2SeqModel::family() of its models
  // The model `config` describes, sized for `vocab`, its parameters begun as `init` says.
  std::unique_ptr<Seq2SeqModel> (*build)(const io::Config& config, const VocabSizes& vocab, ParameterInit init);
  // The longest source or output, in tokens (eos included), that decoding gives the model.
  int64_t (*max_sequence_length)(const io::Config& config);
  // The most tokens per side the model can hold at all (a position table's size); 0 = no limit.
  int64_t (*position_limit)(const io::Config& config);
  // The width d of the noam schedule's lr * d^-0.5 (optim/schedule.h).
  int64_t (*schedule_width)(const io::Config& config);
};

// ModelFamily::max_sequence_length of a model without a position table (an RNN, a Transformer
// with relative positions): 4 x data.max_len keeps decoding near the lengths the model was
// trained on, and keeps a 100,000-character input line from running the quadratic decoder for
// hours. The output's own limit comes from the source length (decode.max_len_ratio, max_len_extra).
inline int64_t tableless_sequence_length(const io::Config& config) { return 4 * int64_t(config.data.max_len); }

// ModelFamily::build for a Model constructed from (options, init), with its options from
// options_of(config, vocab).
template <class Model, auto options_of>
std::unique_ptr<Seq2SeqModel> build_model(const io::Config& config, const VocabSizes& vocab, ParameterInit init) {
  return std::make_unique<Model>(options_of(config, vocab), init);
}

}  // namespace attn::models
