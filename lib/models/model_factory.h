#pragma once
// Builds the model a config names, sized for its vocabularies.
#include <memory>

#include "io/config.h"
#include "models/seq2seq_model.h"

namespace attn::models {

struct VocabSizes {
  int64_t source = 0;
  int64_t target = 0;
};

std::unique_ptr<Seq2SeqModel> make_model(const io::Config& config, const VocabSizes& vocab);

// The longest source or output, in tokens (eos included), that decoding gives a model built from
// `config`: a Transformer's model.transformer.max_positions, its position table's size. An RNN
// has no table; 4 x data.max_len keeps it near the lengths it was trained on, and keeps a
// 100,000-character input line from running the quadratic decoder for hours.
int64_t max_sequence_length(const io::Config& config);

// The width the noam schedule scales by.
int64_t schedule_width(const io::Config& config);

}  // namespace attn::models
