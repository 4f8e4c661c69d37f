#include <cmath>

#include <catch2/catch.hpp>

#include "decode/search.h"
#include "grad_check.h"
#include "ops/cross_entropy.h"
#include "tiny_models.h"

using namespace attn;
using attn::testing::batch_loss;
using attn::testing::batch_of;
using attn::testing::make_examples;
using attn::testing::tiny_transformer;

namespace {

const std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> kPairs = {
    {{4, 5, 6}, {7, 8}}, {{9, 10}, {4, 5, 6, 7}}, {{5}, {6}}, {{8, 7, 6, 5, 4}, {10, 9}}};

// Logits (B, T, V) of a teacher-forced batch, as a flat vector.
std::vector<float> logits_of(const models::Seq2SeqModel& model, const data::Batch& batch) {
  Tape tape;
  NoGradScope no_grad(tape);
  return model.forward(layers::RunContext{tape}, batch).to_vector();
}

}  // namespace

TEST_CASE("extra padding does not change the transformer's loss", "[models][transformer]") {
  auto model = tiny_transformer();
  auto examples = make_examples(kPairs);
  double tight = batch_loss(*model, batch_of(examples, 1), 0.1f);
  double padded = batch_loss(*model, batch_of(examples, 16), 0.1f);
  CHECK(padded == Approx(tight).epsilon(1e-5));
}

TEST_CASE("changing a future target token does not change earlier logits", "[models][transformer]") {
  auto model = tiny_transformer();
  auto original = make_examples({{{4, 5, 6}, {7, 8, 9, 10}}});
  auto changed = make_examples({{{4, 5, 6}, {7, 8, 4, 10}}});  // position 2 differs
  data::Batch a = batch_of(original), b = batch_of(changed);
  auto logits_a = logits_of(*model, a), logits_b = logits_of(*model, b);
  int64_t vocab = 11;
  // tgt_in = bos 7 8 9 10: positions 0..2 see only bos 7 8, identical in both.
  for (int64_t i = 0; i < 3 * vocab; ++i) CHECK(logits_a[i] == Approx(logits_b[i]).margin(1e-5));
  bool later_differs = false;
  for (int64_t i = 3 * vocab; i < 4 * vocab; ++i) later_differs |= std::fabs(logits_a[i] - logits_b[i]) > 1e-4;
  CHECK(later_differs);
}

TEST_CASE("transformer gradients match finite differences through the whole model", "[models][transformer][grad]") {
  // GELU, not ReLU: central differences are only valid where the function is smooth.
  models::TransformerOptions options = attn::testing::tiny_transformer_options();
  options.layer.activation = ops::Activation::gelu;
  SECTION("post-norm, sinusoidal positions, tied shared embeddings") {}
  SECTION("pre-norm, learned positions, separate untied embeddings") {
    options.layer.pre_norm = true;
    options.learned_positions = true;
    options.shared_embeddings = false;
    options.tied_embeddings = false;
  }
  auto model = std::make_unique<models::TransformerModel>(options, 3);
  auto examples = make_examples({{{4, 5}, {6, 7}}, {{8}, {9, 10, 4}}});
  data::Batch batch = batch_of(examples, 1);
  ParameterStore& store = model->parameters();
  // d(loss)/d(parameters) by the tape, then central differences on every parameter.
  {
    Tape tape;
    Tensor logits = model->forward(layers::RunContext{tape}, batch);
    tape.backward(ops::cross_entropy(tape, logits, batch.tgt_out, {0.1f, data::kPadId}).loss);
  }
  std::vector<float> analytic(store.grads(), store.grads() + store.size());
  float* values = store.values();
  const float step = 1e-2f;
  int mismatches = 0;
  for (int64_t i = 0; i < int64_t(store.size()); ++i) {
    float original = values[i];
    values[i] = original + step;
    double plus = batch_loss(*model, batch, 0.1f);
    values[i] = original - step;
    double minus = batch_loss(*model, batch, 0.1f);
    values[i] = original;
    double numeric = (plus - minus) / (2 * step);
    if (std::fabs(numeric - analytic[i]) > 5e-3 + 5e-2 * std::fabs(numeric)) {
      ++mismatches;
      std::string name;
      for (const auto& parameter : store.parameters())
        if (parameter.tensor.data() <= values + i && values + i < parameter.tensor.data() + parameter.tensor.numel())
          name = parameter.name + "[" + std::to_string(values + i - parameter.tensor.data()) + "]";
      if (mismatches < 20)
        UNSCOPED_INFO(name << " element " << i << ": analytic " << analytic[i] << " numeric " << numeric);
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("KV-cache decoding equals full recomputation", "[models][transformer][decode]") {
  auto model = tiny_transformer();
  auto examples = make_examples({{{4, 5, 6}, {7, 8, 9}}, {{10, 9}, {4, 5, 6}}});
  data::Batch batch = batch_of(examples);
  auto full = logits_of(*model, batch);  // (B, T, V)
  Tape tape;
  NoGradScope no_grad(tape);
  layers::RunContext ctx{tape};
  auto state = model->start(ctx, batch);
  int64_t vocab = 11;
  for (int64_t t = 0; t < 4; ++t) {  // tgt_in = bos y1 y2 y3
    std::vector<int32_t> previous;
    for (int64_t b = 0; b < batch.size; ++b) previous.push_back(batch.tgt_in[b * batch.tgt_len + t]);
    auto step = model->step(ctx, *state, previous).to_vector();  // (B, V)
    for (int64_t b = 0; b < batch.size; ++b)
      for (int64_t v = 0; v < vocab; ++v)
        CHECK(step[b * vocab + v] == Approx(full[(b * batch.tgt_len + t) * vocab + v]).margin(1e-4));
  }
}
