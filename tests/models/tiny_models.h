#pragma once
// Tiny models and batches for invariant tests: vocabulary 11 (ids 0-3 special), width 8.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "data/batch.h"
#include "io/config.h"
#include "layers/attention_maps.h"
#include "models/rnn_attention.h"
#include "models/transformer.h"

namespace attn::testing {

inline constexpr int64_t kTinyVocab = 11;

// The tiny model of each kind the shared invariant tests run on (test_model_invariants.cpp):
// every family, the Transformer with every position scheme, and the RNN with every registered
// recurrent cell.
struct TinyModelKind {
  std::string label;  // "transformer sinusoidal", ..., "rnn gru", "rnn lstm"
  ModelType type;
  CellType cell;                                // model.rnn.cell (the RNN's)
  Positions positions = Positions::sinusoidal;  // model.transformer.positions (the Transformer's)
};
std::vector<TinyModelKind> tiny_model_kinds();
// The name of every registered recurrent cell (layers/recurrent_cell.h), for Catch2 generators.
std::vector<std::string> recurrent_cell_names();

// The config of a tiny model: Transformer width 8, 2 heads, FFN 16, one layer each side, 64
// positions; RNN embedding 8, encoder 4 per direction (states 8 wide), decoder 8, attention 8;
// no dropout; shared tied embeddings; train.seed = seed.
io::Config tiny_model_config(const TinyModelKind& kind, uint64_t seed = 3);
// make_model(tiny_model_config(kind, seed), vocabulary 11 on both sides).
std::unique_ptr<models::Seq2SeqModel> tiny_model(const TinyModelKind& kind, uint64_t seed = 3);

// The options of the same tiny configs, for tests that build a family directly.
models::TransformerOptions tiny_transformer_options(Positions positions = Positions::sinusoidal);
std::unique_ptr<models::TransformerModel> tiny_transformer(uint64_t seed = 3);
models::RnnAttentionOptions tiny_rnn_options(const std::string& cell = "gru");
std::unique_ptr<models::RnnAttentionModel> tiny_rnn(uint64_t seed = 3, const std::string& cell = "gru");

using TokenPairs = std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>>;
// Four pairs of different lengths (sources with eos: 4, 3, 2, 6 tokens) for invariant tests.
extern const TokenPairs kTinyPairs;

// Examples from token lists (eos appended to both sides); the tiny models take ids 4..10.
std::vector<data::Example> make_examples(
    const std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>>& pairs);
// One batch of all examples, padded to a multiple of pad_multiple.
data::Batch batch_of(const std::vector<data::Example>& examples, int pad_multiple = 8);

// Summed label-smoothed loss of a teacher-forced batch (no dropout), from forward()'s logits.
double batch_loss(const models::Seq2SeqModel& model, const data::Batch& batch, float label_smoothing = 0.f);
// Teacher-forced logits (B, T, V) of a batch, flat, without recording.
std::vector<float> logits_of(const models::Seq2SeqModel& model, const data::Batch& batch);

// Adam (default options: beta2 0.98, no weight decay) on the per-token loss of
// next_batch(step) (models::sequence_loss, training's fused loss), one batch per step, no
// dropout; returns the last step's per-token loss.
double fit(models::Seq2SeqModel& model, const std::function<data::Batch(int)>& next_batch, int steps,
           float learning_rate);

// The whole-model gradient check: d(batch_loss)/d(parameter) from the tape (training's path:
// forward_hidden and the fused loss, models::sequence_loss) against central differences of
// batch_loss (forward's logits, then cross_entropy) with step `step`, element by element over
// every parameter. Returns one line per
// mismatching element ("name[index]: analytic a numeric n"); empty when every element agrees.
std::vector<std::string> model_gradient_mismatches(models::Seq2SeqModel& model, const data::Batch& batch,
                                                   float label_smoothing = 0.1f, float step = 1e-2f);

}  // namespace attn::testing
