#include "models/model_factory.h"

#include "models/rnn_attention.h"
#include "models/transformer.h"

namespace attn::models {

// The one registration of the model families, one for each ModelType (core/choice.h), which
// is what model.type accepts (tests/models/test_model_factory.cpp holds the two together).
const std::vector<ModelFamily>& model_families() {
  static const std::vector<ModelFamily> families = {transformer_family(), rnn_attention_family()};
  return families;
}

const ModelFamily& model_family(const io::Config& config) {
  for (const auto& family : model_families())
    if (family.type == config.model.type) return family;
  ATTN_CHECK(false, "model.type \"", choice_name(config.model.type), "\" has no registered model family");
}

std::unique_ptr<Seq2SeqModel> make_model(const io::Config& config, const VocabSizes& vocab) {
  return model_family(config).build(config, vocab, static_cast<uint64_t>(config.train.seed));
}

std::unique_ptr<Seq2SeqModel> make_model_to_load(const io::Config& config, const VocabSizes& vocab) {
  return model_family(config).build(config, vocab, ParameterInit::without_values());
}

int64_t max_sequence_length(const io::Config& config) { return model_family(config).max_sequence_length(config); }

int64_t position_limit(const io::Config& config) { return model_family(config).position_limit(config); }

int64_t schedule_width(const io::Config& config) { return model_family(config).schedule_width(config); }

}  // namespace attn::models
