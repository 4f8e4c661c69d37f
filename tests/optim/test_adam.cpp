#include <cmath>

#include <catch2/catch.hpp>

#include "core/parameter_store.h"
#include "optim/adam.h"

using namespace attn;

namespace {

// loss = sum_i (p_i - target_i)^2, gradient 2 (p - target), written into the store's grads.
double quadratic_gradient(const Tensor& p, const std::vector<float>& target) {
  Tensor grad = p.grad();
  double loss = 0;
  for (int64_t i = 0; i < p.numel(); ++i) {
    const float difference = p.data()[i] - target[i];
    grad.data()[i] = 2.f * difference;
    loss += double(difference) * difference;
  }
  return loss;
}

}  // namespace

TEST_CASE("Adam minimises a quadratic", "[optim][adam]") {
  ParameterStore store(11);
  Tensor p = store.add("p", {10}, init::normal(1.f));
  store.finalize();
  const std::vector<float> target = {0.5f, -1.f, 2.f, 0.f, 3.f, -2.5f, 1.f, 0.25f, -0.75f, 1.5f};
  optim::Adam adam(store, {0.9f, 0.999f, 1e-8f});
  double loss = quadratic_gradient(p, target);
  REQUIRE(loss > 1.0);
  for (int step = 0; step < 2000 && loss >= 1e-6; ++step) {
    store.zero_grad();
    loss = quadratic_gradient(p, target);
    adam.step(step < 1000 ? 0.05f : 0.005f);
  }
  loss = quadratic_gradient(p, target);
  CHECK(loss < 1e-4);
}

TEST_CASE("one Adam step equals the hand-computed update", "[optim][adam]") {
  ParameterStore store(12);
  Tensor p = store.add("p", {3}, init::zeros());
  store.finalize();
  p.copy_from({1.f, -2.f, 0.5f});
  const std::vector<float> g = {0.1f, -0.3f, 2.f};
  const float lr = 0.01f, beta1 = 0.9f, beta2 = 0.98f, eps = 1e-9f;
  optim::Adam adam(store, {beta1, beta2, eps});
  for (int step = 1; step <= 2; ++step) {
    std::vector<float> before = p.to_vector();
    p.grad().copy_from(g);
    adam.step(lr);
    CHECK(adam.step_count() == step);
    for (int i = 0; i < 3; ++i) {
      // With a constant gradient, m_t = (1 - beta1^t) g and v_t = (1 - beta2^t) g^2, so the
      // bias-corrected update is lr * g / (|g| + eps): a step of lr in the gradient's sign.
      double m = (1 - std::pow(beta1, step)) * g[i], v = (1 - std::pow(beta2, step)) * g[i] * g[i];
      double m_hat = m / (1 - std::pow(beta1, step)), v_hat = v / (1 - std::pow(beta2, step));
      double expected = before[i] - lr * m_hat / (std::sqrt(v_hat) + eps);
      CHECK(p.to_vector()[i] == Approx(expected).margin(1e-6));
      CHECK(adam.first_moment().to_vector()[p.data() - store.values() + i] == Approx(m).margin(1e-7));
      CHECK(adam.second_moment().to_vector()[p.data() - store.values() + i] == Approx(v).margin(1e-7));
    }
  }
}

TEST_CASE("AdamW decays decoupled from the gradient while L2 goes through the moments", "[optim][adam]") {
  const float lr = 0.1f, wd = 0.5f;
  auto one_step = [&](bool decoupled, float gradient) {
    ParameterStore store(13);
    Tensor p = store.add("p", {1}, init::constant(2.f));
    store.finalize();
    p.grad().copy_from({gradient});
    optim::Adam adam(store, {0.9f, 0.98f, 1e-9f, wd, decoupled});
    adam.step(lr);
    return p.item();
  };
  // Decoupled: p (1 - lr wd) - lr sign(g) = 2 * 0.95 - 0.1.
  CHECK(one_step(true, 1.f) == Approx(1.8f).margin(1e-6));
  // L2: g' = g + wd p = 1 + 1 = 2 > 0, and the first Adam step is lr sign(g') = 0.1.
  CHECK(one_step(false, 1.f) == Approx(1.9f).margin(1e-6));
  // A zero gradient: AdamW still shrinks p by lr wd p; L2 takes a full lr step toward 0.
  CHECK(one_step(true, 0.f) == Approx(1.9f).margin(1e-6));
  CHECK(one_step(false, 0.f) == Approx(1.9f).margin(1e-6));
  // L2 adds wd p = 1 to the gradient before normalising: g = -1 cancels it, g = -2 halves it,
  // yet the normalised step keeps full size; AdamW steps +lr after shrinking p to 1.9.
  CHECK(one_step(false, -1.f) == Approx(2.f).margin(1e-6));
  CHECK(one_step(false, -2.f) == Approx(2.1f).margin(1e-6));
  CHECK(one_step(true, -2.f) == Approx(2.f).margin(1e-6));
}

TEST_CASE("Adam restores its step count and rejects an unfinalized store", "[optim][adam]") {
  ParameterStore unfinished(14);
  unfinished.add("p", {2}, init::zeros());
  CHECK_THROWS_WITH(optim::Adam(unfinished), Catch::Contains("finalized"));
  unfinished.finalize();
  optim::Adam adam(unfinished);
  adam.set_step_count(41);
  adam.step(0.001f);
  CHECK(adam.step_count() == 42);
  CHECK(adam.first_moment().numel() == static_cast<int64_t>(unfinished.size()));
}
