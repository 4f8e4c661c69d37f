// layers::PositionScheme: the table of schemes, the absolute tables, and a scheme acting inside
// attention (a bias and a transform of q and k), through a decoder layer's forward and its steps.
#include <cmath>

#include <catch2/catch.hpp>

#include "core/parameter_store.h"
#include "grad_check.h"
#include "layers/alibi_positions.h"
#include "layers/positional_encoding.h"
#include "layers/transformer_layers.h"

using namespace attn;
using attn::testing::random_tensor;

namespace {

// Acts at the two hooks inside attention: ALiBi's bias and a position-dependent scaling of q and
// k (standing in for rotary), so that a wrong position offset shows in the output.
class ScalingAlibi : public layers::PositionScheme {
 public:
  void rotate_queries_keys(Tape&, Tensor& q, Tensor& k, int64_t first) const override {
    q = scaled(q, first);
    k = scaled(k, first);
  }
  ops::AttentionBias attention_bias() const override { return {{0.5f, 0.25f}}; }

 private:
  // x (B, H, T, Dh): row t times 1 + (first + t) / 4.
  static Tensor scaled(const Tensor& x, int64_t first) {
    std::vector<float> values = x.to_vector();
    const int64_t length = x.dim(2), width = x.dim(3);
    for (size_t i = 0; i < values.size(); ++i) values[i] *= 1.f + float(first + int64_t(i) / width % length) / 4.f;
    return Tensor::from_vector(x.shape(), values);
  }
};

layers::TransformerLayerOptions small_layer() {
  layers::TransformerLayerOptions options;
  options.width = 8;
  options.heads = 2;
  options.ffn_width = 16;
  options.dropout = 0.f;
  return options;
}

}  // namespace

TEST_CASE("the position schemes table builds every model.transformer.positions name", "[layers][positions]") {
  const layers::PositionSchemeOptions options{6, 4, 2};
  ParameterStore store(1);
  auto sinusoidal = layers::make_position_scheme(Positions::sinusoidal, store, "positions", options);
  CHECK(store.parameters().empty());  // the sinusoids are a constant
  auto learned = layers::make_position_scheme(Positions::learned, store, "positions", options);
  REQUIRE(store.parameters().size() == 1);
  CHECK(store.contains("positions.weight"));
  CHECK(store.get("positions.weight").shape() == Shape{6, 4});
  store.finalize();

  // Absolute schemes add rows first .. first + T - 1 of their table to (B, T, D).
  Tape tape;
  NoGradScope no_grad(tape);
  Tensor zeros = Tensor::zeros({2, 3, 4});
  auto rows = sinusoidal->embed(tape, zeros, 2).to_vector();
  auto table = layers::sinusoid_table(6, 4).to_vector();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 3 * 4; ++i) CHECK(rows[b * 12 + i] == table[2 * 4 + i]);
  CHECK_THROWS_WITH(sinusoidal->embed(tape, zeros, 4), Catch::Contains("max_positions"));
  CHECK(!sinusoidal->attention_bias());
  CHECK(!learned->attention_bias());

  // The relative schemes have no table and no parameters; ALiBi's bias has a slope per head.
  const size_t parameters = store.parameters().size();
  ParameterStore relative(1);
  auto rotary = layers::make_position_scheme(Positions::rotary, relative, "positions", options);
  auto alibi = layers::make_position_scheme(Positions::alibi, relative, "positions", options);
  CHECK(relative.parameters().empty());
  CHECK(store.parameters().size() == parameters);
  CHECK(!rotary->attention_bias());
  CHECK(alibi->attention_bias().slopes == layers::alibi_slopes(2));
  for (const auto& scheme : {rotary.get(), alibi.get()}) {
    auto far = scheme->embed(tape, zeros, 1000).to_vector();  // no table, no limit: nothing added
    CHECK(far == zeros.to_vector());
  }
}

TEST_CASE("ALiBi's slopes follow the paper's rule for any number of heads", "[layers][positions]") {
  // Powers of two: 2^(-8 (h + 1) / H).
  CHECK(layers::alibi_slopes(1) == std::vector<float>{1.f / 256});
  CHECK(layers::alibi_slopes(2) == std::vector<float>{1.f / 16, 1.f / 256});
  CHECK(layers::alibi_slopes(4) == std::vector<float>{1.f / 4, 1.f / 16, 1.f / 64, 1.f / 256});
  const std::vector<float> eight = layers::alibi_slopes(8);
  REQUIRE(eight.size() == 8);
  for (int h = 0; h < 8; ++h) CHECK(eight[h] == std::ldexp(1.f, -(h + 1)));
  // Others: the 4 slopes of 4 heads, then 2^-1 and 2^-3 of 8 heads' (the ones 4 heads lack).
  CHECK(layers::alibi_slopes(6) == std::vector<float>{1.f / 4, 1.f / 16, 1.f / 64, 1.f / 256, 1.f / 2, 1.f / 8});
  CHECK(layers::alibi_slopes(3) == std::vector<float>{1.f / 16, 1.f / 256, 1.f / 4});
}

TEST_CASE("rotary positions need an even head width", "[layers][positions]") {
  ParameterStore store(1);
  CHECK_THROWS_WITH(layers::make_position_scheme(Positions::rotary, store, "positions", {8, 6, 2}),
                    Catch::Contains("head width d_model / heads = 6 / 2 = 3 must be even"));
}

TEST_CASE("a decoder layer's steps equal its forward under a scheme acting inside attention", "[layers][positions]") {
  const int64_t batch = 2, length = 5, source = 4, width = 8;
  ScalingAlibi scheme;
  ParameterStore store(3);
  layers::TransformerDecoderLayer layer(store, "decoder.layers.0", small_layer(), 0, &scheme);
  store.finalize();
  Tape tape;
  NoGradScope no_grad(tape);
  layers::RunContext ctx{tape};
  Tensor x = random_tensor({batch, length, width}, 1, 1.f, false);       // (B, T, D)
  Tensor memory = random_tensor({batch, source, width}, 2, 1.f, false);  // (B, S, D)
  const layers::DecoderMasks masks{ops::AttentionMask::causal_mask(scheme.attention_bias()),
                                   ops::AttentionMask::padding({4, 2})};
  auto full = layer(ctx, x, memory, masks).to_vector();  // (B, T, D)

  layers::DecoderLayerCache cache{layers::KvCache{}, layer.project_memory(ctx, memory)};
  auto xs = x.to_vector();
  for (int64_t t = 0; t < length; ++t) {
    std::vector<float> step_input;
    for (int64_t b = 0; b < batch; ++b)
      step_input.insert(step_input.end(), xs.begin() + (b * length + t) * width,
                        xs.begin() + (b * length + t + 1) * width);
    auto step = layer.step(ctx, Tensor::from_vector({batch, 1, width}, step_input), cache, masks).to_vector();
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t e = 0; e < width; ++e)
        CHECK(step[b * width + e] == Approx(full[(b * length + t) * width + e]).margin(1e-5));
  }

  // The bias did act: the mask without it gives another output.
  const layers::DecoderMasks bare{ops::AttentionMask::causal_mask(), masks.memory};
  CHECK(layer(ctx, x, memory, bare).to_vector() != full);
}
