#pragma once
// Tiny models and batches for invariant tests: vocabulary 11 (ids 0-3 special), width 8.
#include <memory>
#include <vector>

#include "data/batch.h"
#include "models/transformer.h"

namespace attn::testing {

models::TransformerOptions tiny_transformer_options();
std::unique_ptr<models::TransformerModel> tiny_transformer(uint64_t seed = 3);

// Examples from token lists (eos appended to both sides); ids must be in 4..10.
std::vector<data::Example> make_examples(
    const std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>>& pairs);
// One batch of all examples, padded to a multiple of pad_multiple.
data::Batch batch_of(const std::vector<data::Example>& examples, int pad_multiple = 8);

// Summed label-smoothed loss of a teacher-forced batch (no dropout).
double batch_loss(const models::Seq2SeqModel& model, const data::Batch& batch, float label_smoothing = 0.f);

}  // namespace attn::testing
