#include <catch2/catch.hpp>

#include "layers/kv_cache.h"
#include "layers/row_gather.h"

using namespace attn;

TEST_CASE("select_rows keeps - drops and repeats whole rows of a tensor in the order asked", "[layers][rows]") {
  Tensor x = Tensor::from_vector({3, 1, 2}, {0, 1, 10, 11, 20, 21});  // (3, 1, 2)
  Tensor rows = layers::select_rows(x, {2, 0, 2});
  CHECK(rows.shape() == Shape{3, 1, 2});
  CHECK(rows.to_vector() == std::vector<float>{20, 21, 0, 1, 20, 21});
  CHECK_THROWS_WITH(layers::select_rows(x, {3}), Catch::Contains("row 3") && Catch::Contains("(3, 1, 2)"));
}

TEST_CASE("select_rows gathers one value per row the same way", "[layers][rows]") {
  const std::vector<int32_t> lengths = {4, 7, 2};
  CHECK(layers::select_rows(lengths, {1, 1, 2}) == std::vector<int32_t>{7, 7, 2});
  CHECK(layers::select_rows(lengths, {}).empty());
  CHECK_THROWS_WITH(layers::select_rows(lengths, {0, -1}), Catch::Contains("row -1 of 3"));
}

TEST_CASE("a kv cache gathers its keys and values by row - an empty one stays empty", "[layers][rows]") {
  layers::KvCache cache;
  cache.select_rows({0, 0});
  CHECK(cache.empty());
  cache.append(Tensor::from_vector({2, 1, 1, 1}, {1, 2}), Tensor::from_vector({2, 1, 1, 1}, {3, 4}));
  cache.select_rows({1, 1, 0});
  CHECK(cache.keys.to_vector() == std::vector<float>{2, 2, 1});
  CHECK(cache.values.to_vector() == std::vector<float>{4, 4, 3});
}
