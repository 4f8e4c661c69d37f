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

TEST_CASE("a deferred reorder gathers with the next append - as a reorder then an append would", "[layers][rows]") {
  auto steps = [](float first) {  // (2, 1, 1, 1) keys, values
    return std::make_pair(Tensor::from_vector({2, 1, 1, 1}, {first, first + 1}),
                          Tensor::from_vector({2, 1, 1, 1}, {first + 10, first + 11}));
  };
  layers::KvCache eager, deferred;
  for (layers::KvCache* cache : {&eager, &deferred}) cache->append(steps(1).first, steps(1).second);
  // Two reorders before one append compose: {1, 0} then {1, 1} keeps row 0 twice.
  eager.select_rows({1, 0});
  eager.select_rows({1, 1});
  deferred.defer_select_rows({1, 0});
  deferred.defer_select_rows({1, 1});
  CHECK(deferred.keys.to_vector() == std::vector<float>{1, 2});  // untouched until the append
  CHECK_THROWS_WITH(deferred.select_rows({0}), Catch::Contains("deferred reorder"));
  for (layers::KvCache* cache : {&eager, &deferred}) cache->append(steps(5).first, steps(5).second);
  CHECK(deferred.keys.shape() == Shape{2, 1, 2, 1});
  CHECK(deferred.keys.to_vector() == eager.keys.to_vector());
  CHECK(deferred.values.to_vector() == eager.values.to_vector());
  CHECK(deferred.keys.to_vector() == std::vector<float>{1, 5, 1, 6});
  CHECK(deferred.values.to_vector() == std::vector<float>{11, 15, 11, 16});
}

TEST_CASE("source rows: beams reordered within their sentences move nothing - a row changing sentence does",
          "[layers][rows]") {
  layers::SourceRows rows(2);
  CHECK(rows.size() == 2);
  CHECK(rows.reorder({0, 0, 0, 1, 1, 1}));        // the first beam step: each sentence takes 3 rows
  CHECK_FALSE(rows.reorder({2, 0, 1, 5, 5, 3}));  // every row stays with its sentence
  CHECK(rows.size() == 6);
  CHECK(rows.reorder({3, 4, 5}));  // sentence 0 finished: the rows shift
  CHECK_FALSE(rows.reorder({1, 1, 0}));
  CHECK(rows.reorder({0, 1}));  // a sentence keeps fewer beams
  CHECK_THROWS_WITH(rows.reorder({2}), Catch::Contains("row 2 of 2"));
}
