// TrainStep in bf16 (train.precision): the forward multiplies with bf16 copies of the matmul
// weights, made again from the f32 master weights before every step, and its loss and
// gradients stay close to f32's.
#include <cmath>

#include <catch2/catch.hpp>

#include "bf16_support.h"
#include "core/dtype.h"
#include "models/model_factory.h"
#include "models/tiny_models.h"
#include "ops/gemm.h"
#include "train/train_step.h"

using namespace attn;
using attn::testing::batch_of;
using attn::testing::kTinyPairs;
using attn::testing::make_examples;
using attn::testing::tiny_model_config;
using attn::testing::TinyModelKind;

namespace {

io::Config config_in(const TinyModelKind& kind, Precision precision) {
  io::Config config = tiny_model_config(kind);
  config.train.precision = precision;
  config.train.warmup_steps = 1;
  return config;
}

// One accumulate + update; the step's per-token loss and gradient norm.
train::StepStats one_step(train::TrainStep& step, const data::Batch& batch, int64_t number) {
  Rng dropout(7);
  train::StepStats stats = step.accumulate({batch}, batch.tgt_tokens, dropout);
  step.update(stats, number);
  return stats;
}

}  // namespace

TEST_CASE(
    "bf16 training multiplies with copies of the updated master weights at every step - packed but for the output "
    "projection",
    "[train][bf16]") {
  ATTN_SKIP_UNLESS_BF16_MATMUL();
  auto kind = GENERATE(from_range(testing::tiny_model_kinds()));  // every family and recurrent cell
  INFO(kind.label);
  io::Config config = config_in(kind, Precision::bf16);
  auto model = models::make_model(config, {testing::kTinyVocab, testing::kTinyVocab});
  train::TrainStep step(*model, config, ops::resolve_precision(config.train.precision, "train.precision"));
  data::Batch batch = batch_of(make_examples(kTinyPairs));
  for (int64_t number = 1; number <= 3; ++number) {
    one_step(step, batch, number);
    step.refresh_matmul_weights();  // what the next accumulate does first
    // Packed for the forward products, but for the output projection, which the fused loss
    // multiplies plain.
    const MatmulWeight* projection = model->output_projection().weight;
    REQUIRE(projection);
    model->parameters().for_each_matmul_weight(
        [&](MatmulWeight& weight) { CHECK(bool(weight.packed) == (&weight != projection)); });
    int checked = 0;
    for (const NamedParameter& parameter : model->parameters().parameters()) {
      if (parameter.tensor.rank() != 2) continue;
      auto weight = model->parameters().matmul_weight(parameter.name);
      REQUIRE(weight->precision == Precision::bf16);
      const float* master = parameter.tensor.data();
      const uint16_t* copy = weight->bf16.data_bf16();
      int64_t stale = 0;
      for (int64_t i = 0; i < parameter.tensor.numel(); ++i) stale += copy[i] != f32_to_bf16(master[i]);
      CHECK(stale == 0);
      ++checked;
    }
    CHECK(checked > 2);
  }
}

TEST_CASE("a bf16 training step's loss and gradient norm are within bf16 rounding of f32's", "[train][bf16]") {
  ATTN_SKIP_UNLESS_BF16_MATMUL();
  auto kind = GENERATE(from_range(testing::tiny_model_kinds()));  // every family and recurrent cell
  INFO(kind.label);
  data::Batch batch = batch_of(make_examples(kTinyPairs));
  auto stats_in = [&](Precision precision) {
    io::Config config = config_in(kind, precision);
    auto model = models::make_model(config, {testing::kTinyVocab, testing::kTinyVocab});
    train::TrainStep step(*model, config, ops::resolve_precision(config.train.precision, "train.precision"));
    std::vector<train::StepStats> stats;
    for (int64_t number = 1; number <= 3; ++number) stats.push_back(one_step(step, batch, number));
    return stats;
  };
  std::vector<train::StepStats> f32 = stats_in(Precision::f32), bf16 = stats_in(Precision::bf16);
  for (size_t i = 0; i < f32.size(); ++i) {
    INFO("step " << i + 1);
    CHECK(bf16[i].loss == Approx(f32[i].loss).epsilon(0.01));
    CHECK(bf16[i].grad_norm == Approx(f32[i].grad_norm).epsilon(0.05));
    CHECK(bf16[i].loss != f32[i].loss);  // bf16 really ran: the products differ in the last bits
  }
}
