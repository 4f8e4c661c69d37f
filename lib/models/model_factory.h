#pragma once
// Builds the model a config names, sized for its vocabularies, and answers the questions about
// it that depend on its family (model.type), through the one table of families.
#include <cstdint>
#include <memory>
#include <vector>

#include "io/config.h"
#include "models/model_family.h"
#include "models/seq2seq_model.h"

namespace attn::models {

// Every family, in registration order (model_factory.cpp).
const std::vector<ModelFamily>& model_families();
// The family config.model.type names; an error naming model.type and the known families otherwise.
const ModelFamily& model_family(const io::Config& config);

// The model of `config`, its parameters initialised from train.seed.
std::unique_ptr<Seq2SeqModel> make_model(const io::Config& config, const VocabSizes& vocab);
// The same without values, for a checkpoint's to be adopted (io::adopt_parameters): decoding and
// export never make the initial model.
std::unique_ptr<Seq2SeqModel> make_model_to_load(const io::Config& config, const VocabSizes& vocab);

// The longest source or output, in tokens (eos included), that decoding gives a model built from
// `config`: a Transformer's model.transformer.max_positions, its position table's size. A model
// without a table (an RNN, a Transformer with rotary or alibi positions) takes 4 x data.max_len
// (models/model_family.h, tableless_sequence_length).
int64_t max_sequence_length(const io::Config& config);

// The most tokens per side (eos and padding included) a model built from `config` can hold at
// all: a Transformer's model.transformer.max_positions; 0 for a model without a position table
// (an RNN, a Transformer with rotary or alibi positions), which has no such limit.
// Teacher-forced passes (validation loss, attention dumps) cut or skip at this length only.
int64_t position_limit(const io::Config& config);

// The width d of the noam schedule (lr * d^-0.5): a Transformer's model.transformer.d_model; an
// RNN's model.rnn.decoder_hidden (see rnn_attention.h).
int64_t schedule_width(const io::Config& config);

}  // namespace attn::models
