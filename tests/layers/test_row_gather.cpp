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

TEST_CASE("a kv cache copies between two storages - reused two appends later unless held elsewhere", "[layers][rows]") {
  auto step = [](float value) { return Tensor::full({2, 1, 1, 1}, value); };  // (2, 1, 1, 1)
  layers::KvCache cache;
  cache.append(step(1), step(1));
  cache.append(step(2), step(2));
  const Tensor first = cache.keys.detach();  // a second handle on the storage just written
  cache.append(step(3), step(3));
  CHECK_FALSE(cache.keys.same_storage(first));
  // The storage of `first` is still held, so the next append takes a new one and leaves it be.
  cache.append(step(4), step(4));
  CHECK_FALSE(cache.keys.same_storage(first));
  CHECK(first.to_vector() == std::vector<float>{1, 2, 1, 2});
  const Tensor third = cache.keys;  // steps 1-4
  CHECK(third.to_vector() == std::vector<float>{1, 2, 3, 4, 1, 2, 3, 4});
  cache.append(step(5), step(5));  // into the storage steps 1-3 were in: free and large enough
  const float* before_next = cache.keys.data();
  cache.append(step(6), step(6));
  cache.append(step(7), step(7));
  CHECK(cache.keys.data() == before_next);  // two appends later, the same storage again
  CHECK(cache.keys.to_vector() == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 1, 2, 3, 4, 5, 6, 7});
  CHECK(third.to_vector() == std::vector<float>{1, 2, 3, 4, 1, 2, 3, 4});
  CHECK(cache.values.to_vector() == cache.keys.to_vector());
}

TEST_CASE("a kv cache's eager reorders alternate storages too - and gather bf16 as bf16", "[layers][rows]") {
  Tensor bf16_keys = Tensor::empty({3, 1, 1, 2}, DType::bf16);  // (3, 1, 1, 2), any 16-bit patterns
  for (uint16_t i = 0; i < 6; ++i) bf16_keys.data_bf16()[i] = uint16_t(1000 + i);
  layers::KvCache cache(bf16_keys, Tensor::from_vector({3, 1, 1, 2}, {0, 1, 10, 11, 20, 21}));
  cache.select_rows({2, 0});
  CHECK(cache.keys.dtype() == DType::bf16);
  CHECK(std::vector<uint16_t>(cache.keys.data_bf16(), cache.keys.data_bf16() + 4) ==
        std::vector<uint16_t>{1004, 1005, 1000, 1001});
  const float* first = cache.values.data();
  cache.select_rows({1, 1});
  CHECK(cache.values.data() != first);  // read from one storage, written to the other
  CHECK(cache.values.to_vector() == std::vector<float>{0, 1, 0, 1});
  cache.select_rows({0});
  CHECK(cache.values.data() == first);
  CHECK(cache.values.to_vector() == std::vector<float>{0, 1});
  CHECK_THROWS_WITH(layers::select_rows_into(cache.values, {0}, cache.keys), Catch::Contains("into"));
}
