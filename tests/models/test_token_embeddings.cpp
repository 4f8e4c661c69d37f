#include <catch2/catch.hpp>

#include "grad_check.h"
#include "models/token_embeddings.h"

using namespace attn;

namespace {

models::TokenEmbeddingOptions options_of(int64_t source_vocab, int64_t target_vocab, bool shared, bool tied) {
  models::TokenEmbeddingOptions options;
  options.source_vocab = source_vocab;
  options.target_vocab = target_vocab;
  options.shared_embeddings = shared;
  options.tied_embeddings = tied;
  return options;
}

std::vector<std::string> names_of(const ParameterStore& store) {
  std::vector<std::string> names;
  for (const auto& parameter : store.parameters()) names.push_back(parameter.name);
  return names;
}

}  // namespace

TEST_CASE("shared tied token embeddings: one table for both sides and for the output", "[models][embeddings]") {
  ParameterStore store(1);
  models::TokenEmbeddings embeddings(options_of(7, 7, true, true), 4);
  embeddings.add_source(store);
  embeddings.add_target(store);
  embeddings.add_output(store);
  store.finalize();
  CHECK(names_of(store) == std::vector<std::string>{"embedding.weight"});
  CHECK(embeddings.target().table().data() == embeddings.source().table().data());
  // Tied: logits = h E^T, row by row.
  Tensor hidden = testing::random_tensor({2, 4}, 3, 1.f, false);
  Tape tape;
  std::vector<float> logits = embeddings.project(layers::RunContext{tape}, hidden).to_vector();  // (2, 7)
  std::vector<float> table = embeddings.target().table().to_vector(), h = hidden.to_vector();
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t v = 0; v < 7; ++v) {
      double expected = 0.0;
      for (int64_t k = 0; k < 4; ++k) expected += double(h[r * 4 + k]) * table[v * 4 + k];
      CHECK(logits[r * 7 + v] == Approx(expected).margin(1e-5));
    }
}

TEST_CASE("separate untied token embeddings: three parameters in registration order", "[models][embeddings]") {
  ParameterStore store(1);
  models::TokenEmbeddings embeddings(options_of(7, 9, false, false), 4);
  embeddings.add_source(store);
  store.add("between", {1}, init::zeros());  // a family's own parameters may come in between
  embeddings.add_target(store);
  embeddings.add_output(store);
  store.finalize();
  CHECK(names_of(store) == std::vector<std::string>{"encoder.embedding.weight", "between", "decoder.embedding.weight",
                                                    "decoder.output.weight"});
  CHECK(store.get("decoder.output.weight").shape() == Shape{9, 4});
  Tape tape;
  CHECK(embeddings.project(layers::RunContext{tape}, Tensor::zeros({3, 4})).shape() == Shape{3, 9});
}

TEST_CASE("token embeddings refuse shared tables over two vocabularies and parts out of order",
          "[models][embeddings]") {
  CHECK_THROWS_WITH(models::TokenEmbeddings(options_of(7, 9, true, true), 4),
                    "shared embeddings need one vocabulary, got 7 and 9");
  ParameterStore store(1);
  models::TokenEmbeddings embeddings(options_of(7, 9, false, false), 4);
  CHECK_THROWS_WITH(embeddings.add_target(store), Catch::Contains("after the source table"));
  embeddings.add_source(store);
  CHECK_THROWS_WITH(embeddings.add_output(store), Catch::Contains("after the target table"));
}
