#include "models/model_factory.h"

#include "models/rnn_attention.h"
#include "models/transformer.h"

namespace attn::models {

// The one registration of the model families. io/config.cpp's model.type check accepts the same
// names (tests/models/test_model_factory.cpp holds the two lists together).
const std::vector<ModelFamily>& model_families() {
  static const std::vector<ModelFamily> families = {transformer_family(), rnn_attention_family()};
  return families;
}

const ModelFamily& model_family(const io::Config& config) {
  std::string known;
  for (const auto& family : model_families()) {
    if (family.name == config.model.type) return family;
    known += (known.empty() ? "\"" : ", \"") + family.name + "\"";
  }
  ATTN_CHECK(false, "model.type \"", config.model.type, "\" is not a model family; known: ", known);
}

std::unique_ptr<Seq2SeqModel> make_model(const io::Config& config, const VocabSizes& vocab) {
  return model_family(config).build(config, vocab, static_cast<uint64_t>(config.train.seed));
}

int64_t max_sequence_length(const io::Config& config) { return model_family(config).max_sequence_length(config); }

int64_t position_limit(const io::Config& config) { return model_family(config).position_limit(config); }

int64_t schedule_width(const io::Config& config) { return model_family(config).schedule_width(config); }

}  // namespace attn::models
