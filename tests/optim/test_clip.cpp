#include <cmath>
#include <limits>

#include <catch2/catch.hpp>

#include "core/parameter_store.h"
#include "optim/clip.h"

using namespace attn;

namespace {

struct TwoParameters {
  ParameterStore store{21};
  Tensor a = store.add("a", {2}, init::zeros());
  Tensor b = store.add("b", {3}, init::zeros());
  TwoParameters() {
    store.finalize();
    a.grad().copy_from({3.f, 0.f});
    b.grad().copy_from({0.f, 4.f, 12.f});  // global norm sqrt(9 + 16 + 144) = 13
  }
};

}  // namespace

TEST_CASE("global gradient norm spans every parameter", "[optim][clip]") {
  TwoParameters model;
  CHECK(optim::global_grad_norm(model.store) == Approx(13.0));
}

TEST_CASE("clipping scales the global norm down to max_norm and keeps the direction", "[optim][clip]") {
  TwoParameters model;
  CHECK(optim::clip_grad_norm(model.store, 6.5) == Approx(13.0));
  CHECK(optim::global_grad_norm(model.store) == Approx(6.5));
  CHECK(model.a.grad().to_vector()[0] == Approx(1.5f));
  CHECK(model.b.grad().to_vector()[2] == Approx(6.f));
}

TEST_CASE("a norm under max_norm leaves gradients alone", "[optim][clip]") {
  TwoParameters model;
  CHECK(optim::clip_grad_norm(model.store, 100.0) == Approx(13.0));
  CHECK(model.b.grad().to_vector() == std::vector<float>{0.f, 4.f, 12.f});
}

TEST_CASE("a non-finite norm is returned and leaves gradients untouched", "[optim][clip]") {
  for (float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    TwoParameters model;
    model.a.grad().data()[1] = bad;
    double norm = optim::clip_grad_norm(model.store, 1.0);
    CHECK_FALSE(std::isfinite(norm));
    CHECK(model.b.grad().to_vector() == std::vector<float>{0.f, 4.f, 12.f});
    CHECK(model.a.grad().to_vector()[0] == 3.f);
  }
}
