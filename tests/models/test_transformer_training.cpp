#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>

#include "decode/search.h"
#include "decode/translator.h"
#include "grad_check.h"
#include "tiny_models.h"

using namespace attn;
using attn::testing::batch_of;
using attn::testing::make_examples;

namespace {

// Sequence reversal over ids 4..10: the decoder must find each output token by its position
// in the source, which only the positional encoding tells it.
const std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> kReversal = {
    {{4, 5, 6}, {6, 5, 4}},
    {{7, 8}, {8, 7}},
    {{9, 10, 4, 5}, {5, 4, 10, 9}},
    {{6}, {6}},
    {{10, 9, 8}, {8, 9, 10}},
    {{5, 7, 9, 4}, {4, 9, 7, 5}},
    {{8, 4}, {4, 8}},
    {{7, 6, 5, 10, 9}, {9, 10, 5, 6, 7}}};

models::TransformerOptions small_options() {
  models::TransformerOptions options = attn::testing::tiny_transformer_options();
  options.layer.width = 32;
  options.layer.heads = 4;
  options.layer.ffn_width = 64;
  return options;
}

// Rows `order` of x (B, S, D) along S, for every sentence.
std::vector<float> permute_positions(const std::vector<float>& x, int64_t batch, int64_t length, int64_t width,
                                     const std::vector<int64_t>& order) {
  std::vector<float> y(x.size());
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t s = 0; s < length; ++s)
      std::copy_n(x.begin() + (b * length + order[s]) * width, width, y.begin() + (b * length + s) * width);
  return y;
}

float max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  float largest = 0.f;
  for (size_t i = 0; i < a.size(); ++i) largest = std::max(largest, std::fabs(a[i] - b[i]));
  return largest;
}

}  // namespace

TEST_CASE("a tiny transformer overfits eight reversal pairs and greedy decoding reproduces them",
          "[models][transformer][training]") {
  auto model = std::make_unique<models::TransformerModel>(small_options(), 7);
  auto examples = make_examples(kReversal);
  data::Batch batch = batch_of(examples, 1);
  double loss = attn::testing::fit(
      *model, [&](int) { return batch; }, 300, 3e-3f);
  CHECK(loss < 0.02);

  std::vector<const std::vector<int32_t>*> sources;
  for (const auto& example : examples) sources.push_back(&example.src);
  decode::SearchOptions options;
  options.beam = 1;
  std::vector<decode::Hypothesis> found = decode::greedy_search(*model, decode::source_batch(sources), options);
  REQUIRE(found.size() == examples.size());
  for (size_t i = 0; i < examples.size(); ++i) {
    INFO("pair " << i);
    CHECK(found[i].tokens == examples[i].tgt);  // eos included
  }
}

TEST_CASE("encoder self-attention without positions is permutation-equivariant", "[models][transformer]") {
  const int64_t batch = 2, length = 5, width = 16, heads = small_options().layer.heads;
  layers::TransformerLayerOptions options = small_options().layer;
  options.width = width;
  options.ffn_width = 32;
  ParameterStore store(4);
  layers::TransformerEncoderLayer layer(store, "encoder.layers.0", options, 0);
  store.finalize();
  const std::vector<int64_t> order = {3, 0, 4, 1, 2};
  std::vector<float> x = attn::testing::random_tensor({batch, length, width}, 5, 1.f, false).to_vector();
  // The layer's output (B, S, D) and its attention weights (B, H, S, S), flat.
  auto encode = [&](const std::vector<float>& input) {
    Tape tape;
    NoGradScope no_grad(tape);
    layers::AttentionMaps maps;
    layers::RunContext ctx{tape};
    ctx.attention_maps = &maps;
    Tensor in = Tensor::from_vector({batch, length, width}, input);  // (B, S, D)
    std::vector<float> out =
        layer(ctx, in, ops::AttentionMask::padding({int32_t(length), int32_t(length)})).to_vector();
    REQUIRE(maps.maps.size() == 1);
    return std::make_pair(out, maps.maps[0].weights.to_vector());
  };
  auto [permuted_out, permuted_weights] = encode(permute_positions(x, batch, length, width, order));
  auto [out, weights] = encode(x);
  CHECK(max_difference(permuted_out, permute_positions(out, batch, length, width, order)) < 1e-5f);
  // The weights permute on both axes: A(PX) = P A(X) P^T.
  float largest = 0.f;
  for (int64_t bh = 0; bh < batch * heads; ++bh)
    for (int64_t i = 0; i < length; ++i)
      for (int64_t j = 0; j < length; ++j)
        largest = std::max(largest, std::fabs(permuted_weights[(bh * length + i) * length + j] -
                                              weights[(bh * length + order[i]) * length + order[j]]));
  CHECK(largest < 1e-6f);
}

TEST_CASE("with sinusoidal positions the encoder output is not permutation-equivariant", "[models][transformer]") {
  auto model = std::make_unique<models::TransformerModel>(small_options(), 4);
  const std::vector<int32_t> tokens = {4, 5, 6, 7, 8, 9, 10, data::kEosId};  // S = 8: no padding
  const std::vector<int64_t> order = {3, 0, 6, 1, 2, 7, 5, 4};
  std::vector<int32_t> permuted(tokens.size());
  for (size_t s = 0; s < tokens.size(); ++s) permuted[s] = tokens[order[s]];
  auto encode = [&](const std::vector<int32_t>& source) {
    Tape tape;
    NoGradScope no_grad(tape);
    data::Batch batch = decode::source_batch({&source});
    REQUIRE(batch.src_len == int64_t(source.size()));
    return model->encode(layers::RunContext{tape}, batch).to_vector();  // (1, S, D)
  };
  const int64_t width = small_options().layer.width, length = int64_t(tokens.size());
  std::vector<float> permuted_then_encoded = encode(permuted);
  std::vector<float> encoded_then_permuted = permute_positions(encode(tokens), 1, length, width, order);
  CHECK(max_difference(permuted_then_encoded, encoded_then_permuted) > 0.1f);
}
