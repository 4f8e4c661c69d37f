#include <catch2/catch.hpp>

#include "core/parameter_store.h"
#include "layers/kv_cache.h"
#include "layers/multi_head_attention.h"
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
  CHECK(cache.keys().to_vector() == std::vector<float>{2, 2, 1});
  CHECK(cache.values().to_vector() == std::vector<float>{4, 4, 3});
}

TEST_CASE("a kv cache keeps each step as appended - a reorder rewrites only its row numbers", "[layers][rows]") {
  auto steps = [](float first) {  // (2, 1, 1, 1) keys, values
    return std::make_pair(Tensor::from_vector({2, 1, 1, 1}, {first, first + 1}),
                          Tensor::from_vector({2, 1, 1, 1}, {first + 10, first + 11}));
  };
  layers::KvCache cache;
  const auto first = steps(1);
  cache.append(first.first, first.second);
  // Two reorders compose: {1, 0} then {1, 1} keeps row 0 twice.
  cache.select_rows({1, 0});
  cache.select_rows({1, 1});
  REQUIRE(cache.entries().in_steps());
  CHECK(cache.entries().step_keys->front().same_storage(first.first));  // nothing copied
  CHECK(*cache.entries().step_rows == std::vector<int32_t>{0, 0});
  CHECK(cache.keys().to_vector() == std::vector<float>{1, 1});
  CHECK(cache.values().to_vector() == std::vector<float>{11, 11});
  CHECK_THROWS_WITH(cache.select_rows({2}), Catch::Contains("row 2 of 2"));
  cache.append(steps(5).first, steps(5).second);
  CHECK(cache.entries().step_keys->front().same_storage(first.first));    // still nothing copied
  CHECK(*cache.entries().step_rows == std::vector<int32_t>{0, 0, 0, 1});  // (steps, rows)
  CHECK(cache.keys().shape() == Shape{2, 1, 2, 1});
  CHECK(cache.keys().to_vector() == std::vector<float>{1, 5, 1, 6});
  CHECK(cache.values().to_vector() == std::vector<float>{11, 15, 11, 16});
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

TEST_CASE("a kv cache reordered every step moves no key - each row reads its own history", "[layers][rows]") {
  // Beam search over 12 steps: rows swap before every append, and row r's key at step t is
  // 100 r + t when it is appended; the keys a row reads at the end follow its swaps back.
  layers::KvCache cache;
  std::vector<Tensor> appended;
  std::vector<std::vector<float>> history(2);  // what each row must read, in time order
  for (int t = 1; t <= 12; ++t) {
    if (t > 1) {
      cache.select_rows({1, 0});
      std::swap(history[0], history[1]);
    }
    appended.push_back(Tensor::from_vector({2, 1, 1, 1}, {float(t), float(100 + t)}));
    cache.append(appended.back(), Tensor::full({2, 1, 1, 1}, float(t)));
    history[0].push_back(float(t));
    history[1].push_back(float(100 + t));
  }
  REQUIRE(cache.steps() == 12);
  for (size_t t = 0; t < appended.size(); ++t) CHECK((*cache.entries().step_keys)[t].same_storage(appended[t]));
  std::vector<float> expected = history[0];
  expected.insert(expected.end(), history[1].begin(), history[1].end());
  CHECK(cache.keys().shape() == Shape{2, 1, 12, 1});
  CHECK(cache.keys().to_vector() == expected);
  // Rows dropped and repeated: a sentence finished, another keeps one beam twice.
  cache.select_rows({1, 1, 0});
  CHECK(cache.keys().to_vector().front() == history[1].front());
  CHECK(cache.keys().shape() == Shape{3, 1, 12, 1});
  CHECK_THROWS_WITH(cache.append(Tensor::full({2, 1, 1, 1}, 0.f), Tensor::full({2, 1, 1, 1}, 0.f)),
                    Catch::Contains("for 3 rows"));
}

TEST_CASE("a memory cache reordered keeps its storage - its reads follow the row map - bf16 too", "[layers][rows]") {
  Tensor bf16_keys = Tensor::empty({3, 1, 1, 2}, DType::bf16);  // (3, 1, 1, 2), any 16-bit patterns
  for (uint16_t i = 0; i < 6; ++i) bf16_keys.data_bf16()[i] = uint16_t(1000 + i);
  layers::KvCache cache(bf16_keys, Tensor::from_vector({3, 1, 1, 2}, {0, 1, 10, 11, 20, 21}));
  CHECK(cache.keys().same_storage(bf16_keys));  // full and in order: the storage itself
  cache.select_rows({2, 0, 0, 0});              // beam search's first step spreads sentences over beams
  CHECK(cache.entries().keys.same_storage(bf16_keys));
  const Tensor keys = cache.keys();  // a gathered copy
  CHECK(keys.dtype() == DType::bf16);
  CHECK(std::vector<uint16_t>(keys.data_bf16(), keys.data_bf16() + 4) == std::vector<uint16_t>{1004, 1005, 1000, 1001});
  CHECK(cache.values().to_vector() == std::vector<float>{20, 21, 0, 1, 0, 1, 0, 1});
  cache.select_rows({3, 0});  // a sentence finished
  CHECK(*cache.entries().rows == std::vector<int64_t>{0, 2});
  CHECK(cache.values().to_vector() == std::vector<float>{0, 1, 20, 21});
  CHECK(cache.entries().values.shape() == Shape{3, 1, 1, 2});  // still the three stored rows
  CHECK_THROWS_WITH(cache.append(Tensor::zeros({2, 1, 1, 2}), Tensor::zeros({2, 1, 1, 2})),
                    Catch::Contains("takes no decoding steps"));
}

TEST_CASE("a kv cache refuses what does not fit it - naming the shapes", "[layers][rows]") {
  CHECK_THROWS_WITH(layers::KvCache(Tensor::zeros({2, 1, 3, 4}), Tensor::zeros({2, 1, 2, 4})),
                    Catch::Contains("(2, 1, 3, 4)") && Catch::Contains("(2, 1, 2, 4)"));
  layers::KvCache cache;
  CHECK_THROWS_WITH(cache.append(Tensor::zeros({2, 1, 2, 4}), Tensor::zeros({2, 1, 2, 4})),
                    Catch::Contains("(2, 1, 2, 4)") && Catch::Contains("(B, H, 1, Dh)"));
  CHECK_THROWS_WITH(cache.append(Tensor::zeros({2, 1, 1, 4}, DType::bf16), Tensor::zeros({2, 1, 1, 4}, DType::bf16)),
                    Catch::Contains("f32"));
  cache.append(Tensor::zeros({2, 1, 1, 4}), Tensor::zeros({2, 1, 1, 4}));
  CHECK_THROWS_WITH(cache.select_rows({1, 2}), Catch::Contains("row 2 of 2"));
  cache.select_rows({1, 1, 0});
  CHECK_THROWS_WITH(cache.append(Tensor::zeros({2, 1, 1, 4}), Tensor::zeros({2, 1, 1, 4})),
                    Catch::Contains("for 3 rows"));
}

TEST_CASE("attention over a reordered memory is a decoding step's only - the full forward refuses it by name",
          "[layers][rows]") {
  ParameterStore store(5);
  layers::MultiHeadAttention attention(store, "cross", layers::MultiHeadAttention::Kind::cross, 8, 2, 0.f);
  store.finalize();
  Tape tape;
  NoGradScope no_grad(tape);
  layers::RunContext ctx{tape};
  layers::KvCache memory = attention.project_memory(ctx, Tensor::full({2, 3, 8}, 0.5f));  // (B, S, D)
  memory.select_rows({0, 0, 1});
  const Tensor query = Tensor::full({3, 1, 8}, 0.25f);  // (R, 1, D)
  CHECK(attention.cross_attention(ctx, query, memory, {}).output.shape() == Shape{3, 1, 8});
  CHECK_THROWS_WITH(attention.cross_attention(ctx, query, memory, {}, true), Catch::Contains("row map"));
}

TEST_CASE("a self-attention cache is read by decoding steps only - a training forward refuses it by name",
          "[layers][rows]") {
  ParameterStore store(6);
  layers::MultiHeadAttention attention(store, "self", layers::MultiHeadAttention::Kind::self, 8, 2, 0.f);
  store.finalize();
  Tape tape;
  NoGradScope no_grad(tape);
  layers::KvCache cache;
  const Tensor x = Tensor::full({2, 1, 8}, 0.25f);  // (R, 1, D)
  layers::RunContext decoding{tape};
  CHECK(attention.self_attention_step(decoding, x, cache, ops::AttentionMask::causal_mask()).output.shape() ==
        Shape{2, 1, 8});
  layers::RunContext training{tape, true};
  CHECK_THROWS_WITH(attention.self_attention_step(training, x, cache, ops::AttentionMask::causal_mask()),
                    Catch::Contains("decoding steps only"));
}
