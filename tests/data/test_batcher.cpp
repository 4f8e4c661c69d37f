#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "core/check.h"
#include "core/rng.h"
#include "data/batch.h"
#include "data/batcher.h"

using namespace attn;
using data::Batch;
using data::Batcher;
using data::BatcherOptions;
using data::Example;

namespace {

// An example whose ids (>= 4, then eos) encode its index, with the given lengths (eos included).
Example make_example(int64_t index, int src_len, int tgt_len) {
  Example example;
  example.index = index;
  for (int i = 0; i + 1 < src_len; ++i) example.src.push_back(4 + static_cast<int32_t>((index + i) % 50));
  for (int i = 0; i + 1 < tgt_len; ++i) example.tgt.push_back(4 + static_cast<int32_t>((index * 3 + i) % 50));
  example.src.push_back(data::kEosId);
  example.tgt.push_back(data::kEosId);
  return example;
}

std::vector<Example> random_examples(int count, uint64_t seed) {
  Rng rng(seed);
  std::vector<Example> examples;
  for (int i = 0; i < count; ++i)
    examples.push_back(make_example(i, 2 + static_cast<int>(rng.below(30)), 2 + static_cast<int>(rng.below(30))));
  return examples;
}

std::vector<std::vector<int64_t>> take(Batcher& batcher, int64_t count) {
  std::vector<std::vector<int64_t>> indices;
  for (int64_t i = 0; i < count; ++i) indices.push_back(batcher.next().indices);
  return indices;
}

}  // namespace

TEST_CASE("make_batch pads to multiples of 8 and shifts the target by one", "[data][batch]") {
  auto a = make_example(7, 3, 5), b = make_example(9, 10, 2);
  Batch batch = data::make_batch({&a, &b}, 8);
  REQUIRE(batch.size == 2);
  CHECK(batch.src_len == 16);
  CHECK(batch.tgt_len == 8);
  CHECK(batch.indices == std::vector<int64_t>{7, 9});
  CHECK(batch.src_lengths == std::vector<int32_t>{3, 10});
  CHECK(batch.tgt_lengths == std::vector<int32_t>{5, 2});
  CHECK(batch.src_tokens == 13);
  CHECK(batch.tgt_tokens == 7);
  REQUIRE(batch.src.size() == 2 * 16);
  REQUIRE(batch.tgt_in.size() == 2 * 8);
  for (int64_t row = 0; row < 2; ++row) {
    const Example& example = row == 0 ? a : b;
    const int64_t n = static_cast<int64_t>(example.tgt.size());
    CHECK(batch.tgt_in[row * 8] == data::kBosId);
    for (int64_t t = 0; t < n; ++t) CHECK(batch.tgt_out[row * 8 + t] == example.tgt[t]);
    for (int64_t t = 1; t < n; ++t) CHECK(batch.tgt_in[row * 8 + t] == example.tgt[t - 1]);
    CHECK(batch.tgt_out[row * 8 + n - 1] == data::kEosId);
    for (int64_t t = n; t < 8; ++t) CHECK((batch.tgt_in[row * 8 + t] == 0 && batch.tgt_out[row * 8 + t] == 0));
    for (size_t s = 0; s < example.src.size(); ++s) CHECK(batch.src[row * 16 + s] == example.src[s]);
    for (int64_t s = static_cast<int64_t>(example.src.size()); s < 16; ++s) CHECK(batch.src[row * 16 + s] == 0);
  }
}

TEST_CASE("batches respect batch_tokens and each epoch covers every example once", "[data][batcher]") {
  auto examples = random_examples(500, 3);
  examples.push_back(make_example(500, 90, 4));  // longer than any batch allows: a batch of its own
  Batcher batcher(examples, {/*batch_tokens=*/256, /*pad_multiple=*/8, /*seed=*/5, /*shuffle=*/true});
  const int64_t per_epoch = batcher.batches_per_epoch();
  REQUIRE(per_epoch > 10);
  for (int64_t epoch = 1; epoch <= 2; ++epoch) {
    std::vector<int64_t> seen;
    for (int64_t i = 0; i < per_epoch; ++i) {
      Batch batch = batcher.next();
      CHECK(batcher.epoch() == epoch);
      CHECK(batch.src_len % 8 == 0);
      CHECK(batch.tgt_len % 8 == 0);
      if (batch.size > 1) CHECK(batch.size * std::max(batch.src_len, batch.tgt_len) <= 256);
      seen.insert(seen.end(), batch.indices.begin(), batch.indices.end());
    }
    std::sort(seen.begin(), seen.end());
    std::vector<int64_t> all(examples.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
    CHECK(seen == all);
  }
  batcher.next();
  CHECK(batcher.epoch() == 3);
}

TEST_CASE("batch order is a function of the seed and changes between epochs", "[data][batcher]") {
  auto examples = random_examples(300, 4);
  BatcherOptions options{200, 8, 17, true};
  Batcher first(examples, options), second(examples, options);
  const int64_t per_epoch = first.batches_per_epoch();
  auto epoch1 = take(first, per_epoch), epoch2 = take(first, per_epoch);
  CHECK(take(second, per_epoch) == epoch1);
  CHECK(take(second, per_epoch) == epoch2);
  CHECK(epoch1 != epoch2);
  options.seed = 18;
  Batcher reseeded(examples, options);
  CHECK(take(reseeded, per_epoch) != epoch1);
}

TEST_CASE("a batcher set to a position yields what an uninterrupted one would", "[data][batcher]") {
  auto examples = random_examples(200, 6);
  BatcherOptions options{160, 8, 9, true};
  Batcher reference(examples, options);
  const int64_t per_epoch = reference.batches_per_epoch();
  for (int64_t skip : {int64_t{0}, per_epoch / 2, per_epoch, per_epoch + 3, 2 * per_epoch - 1}) {
    Batcher uninterrupted(examples, options);
    take(uninterrupted, skip);
    const data::BatcherPosition position = uninterrupted.position();
    Batcher resumed(examples, options);
    resumed.set_position(position);
    CHECK(resumed.epoch() == uninterrupted.epoch());
    for (int i = 0; i < per_epoch + 2; ++i) {
      Batch expected = uninterrupted.next(), actual = resumed.next();
      CHECK(actual.indices == expected.indices);
      CHECK(actual.src == expected.src);
      CHECK(actual.tgt_in == expected.tgt_in);
    }
  }
  CHECK_THROWS_AS(reference.set_position({0, 0}), Error);
  CHECK_THROWS_AS(reference.set_position({1, per_epoch + 1}), Error);
}

TEST_CASE("without shuffling - batches come sorted by length", "[data][batcher]") {
  auto examples = random_examples(200, 8);
  Batcher batcher(examples, {128, 8, 1, false});
  int64_t previous_width = 0;
  for (int64_t i = 0; i < batcher.batches_per_epoch(); ++i) {
    Batch batch = batcher.next();
    const int64_t width = std::max(batch.src_len, batch.tgt_len);
    CHECK(width >= previous_width);
    previous_width = width;
  }
}

TEST_CASE("shards of a batch concatenate to the batch", "[data][batch]") {
  auto examples = random_examples(7, 10);
  std::vector<const Example*> rows;
  for (const auto& example : examples) rows.push_back(&example);
  const Batch whole = data::make_batch(rows, 8);
  for (int world : {1, 3, 7, 9}) {
    Batch joined;
    int64_t min_size = whole.size, max_size = 0;
    for (int rank = 0; rank < world; ++rank) {
      Batch part = data::shard(whole, rank, world);
      CHECK(part.src_len == whole.src_len);
      CHECK(part.tgt_len == whole.tgt_len);
      min_size = std::min(min_size, part.size);
      max_size = std::max(max_size, part.size);
      joined.size += part.size;
      joined.src.insert(joined.src.end(), part.src.begin(), part.src.end());
      joined.tgt_in.insert(joined.tgt_in.end(), part.tgt_in.begin(), part.tgt_in.end());
      joined.tgt_out.insert(joined.tgt_out.end(), part.tgt_out.begin(), part.tgt_out.end());
      joined.src_lengths.insert(joined.src_lengths.end(), part.src_lengths.begin(), part.src_lengths.end());
      joined.tgt_lengths.insert(joined.tgt_lengths.end(), part.tgt_lengths.begin(), part.tgt_lengths.end());
      joined.indices.insert(joined.indices.end(), part.indices.begin(), part.indices.end());
      joined.src_tokens += part.src_tokens;
      joined.tgt_tokens += part.tgt_tokens;
    }
    CHECK(max_size - min_size <= 1);
    CHECK(joined.size == whole.size);
    CHECK(joined.src == whole.src);
    CHECK(joined.tgt_in == whole.tgt_in);
    CHECK(joined.tgt_out == whole.tgt_out);
    CHECK(joined.src_lengths == whole.src_lengths);
    CHECK(joined.tgt_lengths == whole.tgt_lengths);
    CHECK(joined.indices == whole.indices);
    CHECK(joined.src_tokens == whole.src_tokens);
    CHECK(joined.tgt_tokens == whole.tgt_tokens);
  }
  CHECK_THROWS_AS(data::shard(whole, 2, 2), Error);
}
