#include <cmath>

#include <catch2/catch.hpp>

#include "decode/search.h"
#include "grad_check.h"
#include "ops/cross_entropy.h"
#include "tiny_models.h"

using namespace attn;
using attn::testing::batch_loss;
using attn::testing::batch_of;
using attn::testing::logits_of;
using attn::testing::make_examples;
using attn::testing::model_gradient_mismatches;
using attn::testing::tiny_transformer;

TEST_CASE("extra padding does not change the transformer's loss", "[models][transformer]") {
  auto model = tiny_transformer();
  auto [tight, padded] = testing::tight_and_padded_loss(*model);
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
  std::vector<std::string> mismatches = model_gradient_mismatches(*model, batch_of(examples, 1));
  for (size_t i = 0; i < mismatches.size() && i < 20; ++i) UNSCOPED_INFO(mismatches[i]);
  CHECK(mismatches.empty());
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
