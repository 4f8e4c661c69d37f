#include <algorithm>
#include <cmath>

#include <catch2/catch.hpp>

#include "core/buffer_pool.h"
#include "core/init.h"
#include "core/parameter_store.h"

using namespace attn;

namespace {

// A tiny "model": two weights and a bias, registered as layers would.
void build(ParameterStore& store) {
  store.add("encoder.weight", {3, 4}, init::xavier_uniform());
  store.add("encoder.bias", {3}, init::zeros());
  store.add("decoder.weight", {2, 3}, init::normal(0.5f));
}

}  // namespace

TEST_CASE("parameter views alias the flat value buffer after finalize", "[core][parameter_store]") {
  ParameterStore store(1);
  Tensor weight = store.add("w", {2, 3}, init::ones());
  Tensor copy = weight;  // a handle a layer holds
  Tensor bias = store.add("b", {5}, init::zeros());
  store.finalize();
  REQUIRE(store.finalized());
  REQUIRE(store.parameter_count() == 11);
  REQUIRE(store.size() >= 11);
  CHECK(weight.to_vector() == std::vector<float>(6, 1.f));  // values survived the packing

  copy.data()[4] = 7.f;
  bias.data()[2] = -3.f;
  const float* values = store.values();
  const size_t weight_offset = weight.data() - values;
  const size_t bias_offset = bias.data() - values;
  REQUIRE(weight_offset + 6 <= store.size());
  REQUIRE(bias_offset + 5 <= store.size());
  CHECK(values[weight_offset + 4] == 7.f);
  CHECK(values[bias_offset + 2] == -3.f);
  CHECK(store.flat_values().data() == values);
  CHECK(store.get("b").data() == bias.data());
  // Each parameter starts on a 64-byte boundary.
  CHECK(reinterpret_cast<uintptr_t>(bias.data()) % 64 == 0);
  CHECK(weight.requires_grad());
}

TEST_CASE("parameter gradients alias the flat gradient buffer", "[core][parameter_store]") {
  ParameterStore store(2);
  Tensor weight = store.add("w", {2, 3}, init::ones());
  Tensor bias = store.add("b", {4}, init::zeros());
  store.finalize();
  bias.grad().data()[1] = 2.5f;
  weight.grad().data()[0] = -1.f;
  const float* grads = store.grads();
  CHECK(grads[bias.data() - store.values() + 1] == 2.5f);
  CHECK(grads[weight.data() - store.values()] == -1.f);
  CHECK(store.flat_grads().data() == grads);
  CHECK(store.flat_values().grad().data() == grads);

  store.zero_grad();
  CHECK(bias.grad().to_vector() == std::vector<float>(4, 0.f));
  CHECK(weight.grad().to_vector() == std::vector<float>(6, 0.f));
}

TEST_CASE("the gradient buffer is made on first use - zero-filled - so a decoding store holds none",
          "[core][parameter_store]") {
  ParameterStore store(3);
  Tensor weight = store.add("w", {300, 300}, init::ones());  // beyond the pool's mapped size
  store.finalize();
  // The parameters' first storages went back to the system, not into the pool's free blocks.
  CHECK(BufferPool::instance().stats().cached_bytes == 0);
  CHECK_FALSE(store.flat_values().has_grad());
  store.zero_grad();  // nothing to zero: still none
  CHECK_FALSE(weight.has_grad());
  CHECK(weight.to_vector() == std::vector<float>(90000, 1.f));

  const float* grads = store.grads();  // the first request makes it
  CHECK(store.flat_values().has_grad());
  CHECK(weight.grad().data() == grads + (weight.data() - store.values()));
  CHECK(std::all_of(grads, grads + store.size(), [](float g) { return g == 0.f; }));
}

TEST_CASE("the same seed gives the same initial parameters and another seed others", "[core][parameter_store]") {
  ParameterStore first(42), second(42), third(43);
  build(first);
  build(second);
  build(third);
  first.finalize();
  second.finalize();
  third.finalize();
  for (const char* name : {"encoder.weight", "decoder.weight"}) {
    CHECK(first.get(name).to_vector() == second.get(name).to_vector());
    CHECK(first.get(name).to_vector() != third.get(name).to_vector());
  }
  CHECK(first.get("encoder.bias").to_vector() == std::vector<float>(3, 0.f));
}

TEST_CASE("xavier_uniform stays inside sqrt(6 / (in + out)) and uses the range", "[core][init]") {
  Rng rng(5);
  Tensor weight = Tensor::zeros({40, 60});
  init::xavier_uniform()(weight, rng);
  const float bound = std::sqrt(6.f / 100.f);
  float largest = 0.f;
  for (float value : weight.to_vector()) largest = std::max(largest, std::fabs(value));
  CHECK(largest <= bound);
  CHECK(largest > 0.9f * bound);
}

TEST_CASE("init::normal has the requested spread", "[core][init]") {
  Rng rng(6);
  Tensor values = Tensor::zeros({20000});
  init::normal(0.5f)(values, rng);
  double sum = 0, squares = 0;
  for (float value : values.to_vector()) {
    sum += value;
    squares += double(value) * value;
  }
  const double mean = sum / values.numel();
  CHECK(std::fabs(mean) < 0.02);
  CHECK(std::sqrt(squares / values.numel() - mean * mean) == Approx(0.5).epsilon(0.03));
}

TEST_CASE("parameter store errors name the parameter", "[core][parameter_store]") {
  ParameterStore store(3);
  store.add("layer.weight", {2, 2}, init::zeros());
  CHECK_THROWS_WITH(store.add("layer.weight", {3}, init::zeros()),
                    Catch::Contains("duplicate parameter name 'layer.weight'"));
  CHECK_THROWS_WITH(store.add("bad", {2, -1}, init::zeros()), Catch::Contains("'bad'"));
  CHECK_THROWS_WITH(store.get("layer.wieght"), Catch::Contains("unknown parameter 'layer.wieght'"));
  CHECK_THROWS_AS(store.values(), Error);  // not finalized yet
  store.finalize();
  CHECK_THROWS_WITH(store.add("late", {1}, init::zeros()), Catch::Contains("finalized"));
}

TEST_CASE("rebind moves every copy of a handle to the new storage", "[core][tensor]") {
  Tensor original = Tensor::from_vector({2}, {1.f, 2.f});
  Tensor copy = original;
  auto data = std::make_shared<Buffer>(8 * sizeof(float), true);
  auto grad = std::make_shared<GradSlot>();
  original.rebind(data, grad, 4);
  CHECK(copy.data() == static_cast<float*>(data->data()) + 4);
  CHECK(copy.to_vector() == std::vector<float>{0.f, 0.f});
  CHECK_THROWS_AS(copy.rebind(data, grad, 7), Error);  // would run past the buffer
}

TEST_CASE("a store made without values adopts them without a copy - and refuses a misfit by name",
          "[core][parameter_store]") {
  Tensor values = Tensor::from_vector({2, 3}, {1.f, 2.f, 3.f, 4.f, 5.f, 6.f});
  ParameterStore trained(3);
  trained.add("layer.weight", {2, 3}, init::zeros());
  trained.finalize();
  CHECK_THROWS_WITH(trained.adopt("layer.weight", values), Catch::Contains("has values of its own"));

  ParameterStore store(ParameterInit::without_values());
  bool initialised = false;
  Tensor weight = store.add("layer.weight", {2, 3}, [&](Tensor&, Rng&) { initialised = true; });
  store.add("layer.bias", {3}, init::zeros());
  store.finalize();
  CHECK_FALSE(initialised);
  CHECK_FALSE(weight.has_values());
  CHECK_THROWS_WITH(store.values(), Catch::Contains("flat parameter buffer"));
  CHECK_THROWS_WITH(store.adopt("layer.weight", Tensor::zeros({3, 2})),
                    Catch::Contains("adopt(layer.weight): F32 (2, 3) wanted"));
  store.adopt("layer.weight", values);
  CHECK(weight.same_storage(values));  // the handle the layer holds sees the adopted values
  CHECK(weight.to_vector() == values.to_vector());
  CHECK_THROWS_WITH(weight.adopt_values(Tensor::zeros({6})), Catch::Contains("cannot become the values of"));
}
