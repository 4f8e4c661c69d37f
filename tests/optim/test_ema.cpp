#include <catch2/catch.hpp>

#include "core/parameter_store.h"
#include "optim/ema.h"

using namespace attn;

namespace {

// Two parameters; values that are exact in f32 through the updates below.
void build(ParameterStore& store) {
  store.add("w", {2, 2}, init::constant(4.f));
  store.add("b", {3}, init::constant(-8.f));
  store.finalize();
}

}  // namespace

TEST_CASE("the moving average starts at the weights and follows ema = d ema + (1 - d) weights", "[optim][ema]") {
  ParameterStore store(1);
  build(store);
  optim::Ema ema(store, 0.75f);
  CHECK(ema.average().to_vector() == store.flat_values().to_vector());

  store.get("w").fill(8.f);
  store.get("b").fill(0.f);
  ema.update();  // 0.75 * 4 + 0.25 * 8 = 5; 0.75 * -8 + 0.25 * 0 = -6
  ParameterStore expected(2);
  build(expected);
  expected.get("w").fill(5.f);
  expected.get("b").fill(-6.f);
  CHECK(ema.average().to_vector() == expected.flat_values().to_vector());
  ema.update();  // 0.75 * 5 + 0.25 * 8 = 5.75; 0.75 * -6 = -4.5
  expected.get("w").fill(5.75f);
  expected.get("b").fill(-4.5f);
  CHECK(ema.average().to_vector() == expected.flat_values().to_vector());
  CHECK(store.get("w").to_vector() == std::vector<float>(4, 8.f));  // the weights untouched
}

TEST_CASE("swapping the moving average into the store twice restores both exactly", "[optim][ema]") {
  ParameterStore store(1);
  build(store);
  optim::Ema ema(store, 0.5f);
  store.get("w").fill(2.f);
  ema.update();  // w: 3
  const std::vector<float> weights = store.flat_values().to_vector(), average = ema.average().to_vector();
  ema.swap_with_store();
  CHECK(store.get("w").to_vector() == std::vector<float>(4, 3.f));
  CHECK(store.flat_values().to_vector() == average);
  ema.swap_with_store();
  CHECK(store.flat_values().to_vector() == weights);
  CHECK(ema.average().to_vector() == average);
}

TEST_CASE("a moving average's decay of 1 or more is refused", "[optim][ema]") {
  ParameterStore store(1);
  build(store);
  CHECK_THROWS_WITH(optim::Ema(store, 1.f), Catch::Contains("[0, 1)"));
}
