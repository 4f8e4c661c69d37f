#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/concat.h"
#include "ops/embedding.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

TEST_CASE("embedding copies the table row of every id", "[ops][embedding]") {
  Tape tape;
  Tensor table = random_tensor({5, 3}, 1, 1.f, false);  // (V, D)
  std::vector<int32_t> ids{4, 0, 2, 2, 1, 4};
  Tensor y = ops::embedding(tape, table, ids, {2, 3});
  REQUIRE(y.shape() == Shape{2, 3, 3});
  auto rows = table.to_vector();
  auto out = y.to_vector();
  for (size_t n = 0; n < ids.size(); ++n)
    for (int j = 0; j < 3; ++j) CHECK(out[n * 3 + j] == rows[ids[n] * 3 + j]);
}

TEST_CASE("embedding table gradient matches finite differences with a padding id present", "[ops][embedding][grad]") {
  // Position t = 2 of both rows holds the padding id 0. The checked function drops those
  // positions' outputs (a split of the flattened rows), so the padding row's numeric gradient
  // is 0 and its analytic one must be too; id 3 repeats, so its row sums two contributions.
  Tensor table = random_tensor({5, 4}, 2);  // (V, D)
  std::vector<int32_t> ids{3, 1, 0, 4, 3, 0};
  auto f = [&ids](Tape& tape, const std::vector<Tensor>& in) {
    Tensor y = ops::embedding(tape, in[0], ids, {2, 3}, 0);  // (2, 3, 4)
    return ops::split(tape, y.view({2, 12}), {8, 4})[0];     // positions t < 2
  };
  CHECK(check_gradients(f, {table}) == "");
}

TEST_CASE("embedding padding row receives exactly zero gradient even when its outputs are used",
          "[ops][embedding][grad]") {
  Tape tape;
  Tensor table = random_tensor({4, 3}, 3);
  std::vector<int32_t> ids{2, 1, 2, 1};
  Tensor y = ops::embedding(tape, table, ids, {4}, 1);
  tape.backward(y, Tensor::full({4, 3}, 1.f));
  auto grad = table.grad().to_vector();
  for (int j = 0; j < 3; ++j) {
    CHECK(grad[0 * 3 + j] == 0.f);  // unused id
    CHECK(grad[1 * 3 + j] == 0.f);  // padding id, looked up twice
    CHECK(grad[2 * 3 + j] == 2.f);  // id 2, looked up twice
    CHECK(grad[3 * 3 + j] == 0.f);
  }
}

TEST_CASE("embedding rejects an out-of-range id naming the id and V", "[ops][embedding]") {
  Tape tape;
  Tensor table = random_tensor({5, 2}, 4, 1.f, false);
  CHECK_THROWS_WITH(ops::embedding(tape, table, {1, 7}, {2}), Catch::Contains("id 7") && Catch::Contains("V=5"));
  CHECK_THROWS_WITH(ops::embedding(tape, table, {-1}, {1}), Catch::Contains("id -1"));
  CHECK_THROWS_AS(ops::embedding(tape, table, {1, 2, 3}, {2}), Error);
}
