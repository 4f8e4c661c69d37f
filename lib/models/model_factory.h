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

}  // namespace attn::models
