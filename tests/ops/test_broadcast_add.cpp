#include <catch2/catch.hpp>

#include "grad_check.h"
#include "ops/broadcast_add.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

TEST_CASE("broadcast_add adds each batch entry's vector at every position", "[ops][broadcast_add]") {
  Tape tape;
  Tensor a = Tensor::from_vector({2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});  // (B, S, D)
  Tensor r = Tensor::from_vector({2, 3}, {100, 200, 300, 400, 500, 600});             // (B, D)
  CHECK(ops::broadcast_add(tape, a, r).to_vector() ==
        std::vector<float>{100, 201, 302, 103, 204, 305, 406, 507, 608, 409, 510, 611});
}

TEST_CASE("broadcast_add rejects an r that is not (B - D) and names both shapes", "[ops][broadcast_add]") {
  Tape tape;
  Tensor a = Tensor::zeros({2, 3, 4});
  CHECK_THROWS_WITH(ops::broadcast_add(tape, a, Tensor::zeros({3, 4})),
                    Catch::Contains("(3, 4)") && Catch::Contains("(2, 3, 4)"));
  CHECK_THROWS_AS(ops::broadcast_add(tape, a, Tensor::zeros({2, 1, 4})), Error);
  CHECK_THROWS_AS(ops::broadcast_add(tape, a, Tensor::zeros({2, 3})), Error);
}

TEST_CASE("broadcast_add gradients match finite differences", "[ops][broadcast_add][grad]") {
  Tensor a = random_tensor({2, 5, 3}, 21);
  Tensor r = random_tensor({2, 3}, 22);
  auto f = [](Tape& tape, const std::vector<Tensor>& x) { return ops::broadcast_add(tape, x[0], x[1]); };
  CHECK(check_gradients(f, {a, r}) == "");
}
