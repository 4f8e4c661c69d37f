// Transformer-only tests. The invariants every family keeps (padding, causality, incremental
// decoding with the KV cache = recomputation, beam 1 = greedy, attention rows, checkpoints)
// are in test_model_invariants.cpp.
#include <catch2/catch.hpp>

#include "tiny_models.h"

using namespace attn;

TEST_CASE("transformer gradients match finite differences through the whole model", "[models][transformer][grad]") {
  // GELU, not ReLU: central differences are only valid where the function is smooth.
  models::TransformerOptions options = attn::testing::tiny_transformer_options();
  options.layer.activation = Activation::gelu;
  SECTION("post-norm, sinusoidal positions, tied shared embeddings") {}
  SECTION("pre-norm, learned positions, separate untied embeddings") {
    options.layer.pre_norm = true;
    options.positions = Positions::learned;
    options.shared_embeddings = false;
    options.tied_embeddings = false;
  }
  SECTION("rotary positions") { options.positions = Positions::rotary; }
  SECTION("alibi positions, pre-norm") {
    options.positions = Positions::alibi;
    options.layer.pre_norm = true;
  }
  auto model = std::make_unique<models::TransformerModel>(options, 3);
  auto examples = attn::testing::make_examples({{{4, 5}, {6, 7}}, {{8}, {9, 10, 4}}});
  std::vector<std::string> mismatches =
      attn::testing::model_gradient_mismatches(*model, attn::testing::batch_of(examples, 1));
  for (size_t i = 0; i < mismatches.size() && i < 20; ++i) UNSCOPED_INFO(mismatches[i]);
  CHECK(mismatches.empty());
}
