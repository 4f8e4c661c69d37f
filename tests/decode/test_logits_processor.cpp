// The logits processors (decode/logits_processor.h) on hand-made rows of logits.
#include <algorithm>
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>

#include "data/vocab.h"
#include "decode/logits_processor.h"

using namespace attn;

namespace {

constexpr int64_t kWidth = 8;
constexpr int32_t kEos = data::kEosId;

std::vector<float> uniform_row() { return std::vector<float>(size_t(kWidth), std::log(1.f / float(kWidth))); }

// The ids whose log-probability is -infinity.
std::vector<int32_t> forbidden(const std::vector<float>& row) {
  std::vector<int32_t> ids;
  for (size_t v = 0; v < row.size(); ++v)
    if (row[v] == decode::kForbiddenLogProb) ids.push_back(int32_t(v));
  return ids;
}

// What the processor forbids after `tokens`, sorted; it must leave the logits as they are.
std::vector<int32_t> forbidden_after(const decode::LogitsProcessor& processor, const std::vector<int32_t>& tokens) {
  std::vector<float> row = uniform_row();
  std::vector<int32_t> ids;
  processor.process(row.data(), kWidth, tokens, ids);
  CHECK(row == uniform_row());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace

TEST_CASE("min length forbids eos until the output holds N tokens - and nothing else", "[decode][logits_processor]") {
  const decode::MinLengthProcessor processor(3, kEos);
  CHECK(forbidden_after(processor, {}) == std::vector<int32_t>{kEos});
  CHECK(forbidden_after(processor, {4, 5}) == std::vector<int32_t>{kEos});
  CHECK(forbidden_after(processor, {4, 5, 6}).empty());
  CHECK(forbidden_after(processor, {4, 5, 6, 7}).empty());
  CHECK(forbidden_after(decode::MinLengthProcessor(0, kEos), {}).empty());
}

TEST_CASE("no-repeat-ngram forbids the tokens that would complete an n-gram already in the hypothesis",
          "[decode][logits_processor]") {
  // Bigrams: after ... 4, the tokens that followed an earlier 4 (5 and 7).
  CHECK(forbidden_after(decode::NoRepeatNgramProcessor(2), {4, 5, 6, 4, 7, 4}) == std::vector<int32_t>{5, 7});
  CHECK(forbidden_after(decode::NoRepeatNgramProcessor(2), {4, 5, 6}).empty());  // 6 came nowhere before
  // Trigrams: after 4 5, what followed an earlier 4 5 (6), not what followed 5 alone (7).
  CHECK(forbidden_after(decode::NoRepeatNgramProcessor(3), {4, 5, 6, 5, 7, 4, 5}) == std::vector<int32_t>{6});
  CHECK(forbidden_after(decode::NoRepeatNgramProcessor(3), {4, 5}).empty());  // no trigram yet
  // Unigrams: every token already used.
  CHECK(forbidden_after(decode::NoRepeatNgramProcessor(1), {6, 4, 6}) == std::vector<int32_t>{4, 6});
  CHECK(forbidden_after(decode::NoRepeatNgramProcessor(1), {}).empty());
  // A repeated token: 4 4 forbids 4 after 4.
  CHECK(forbidden_after(decode::NoRepeatNgramProcessor(2), {4, 4}) == std::vector<int32_t>{4});
}

TEST_CASE("the processors a search applies come from its options - none by default", "[decode][logits_processor]") {
  decode::SearchOptions options;
  CHECK(decode::LogitsProcessors(options).empty());
  options.min_length = 2;
  options.no_repeat_ngram = 1;
  decode::LogitsProcessors processors(options);
  REQUIRE_FALSE(processors.empty());
  processors.start_step(2);
  std::vector<float> row = uniform_row(), other = uniform_row();
  processors.process(0, row.data(), kWidth, {5});  // both apply: eos (too short) and 5 (used)
  processors.process(1, other.data(), kWidth, {6});
  CHECK(row == uniform_row());  // nothing forbidden before the normalisation
  processors.forbid(0, row.data());
  processors.forbid(1, other.data());
  CHECK(forbidden(row) == std::vector<int32_t>{kEos, 5});
  // The other entries keep their values bit for bit.
  for (int32_t v : {0, 1, 2, 4, 6, 7}) CHECK(row[size_t(v)] == uniform_row()[size_t(v)]);
  CHECK(forbidden(other) == std::vector<int32_t>{kEos, 6});
  processors.start_step(1);  // a new step forgets the last one's
  std::vector<float> again = uniform_row();
  processors.process(0, again.data(), kWidth, {1, 2, 7});
  processors.forbid(0, again.data());
  CHECK(forbidden(again) == std::vector<int32_t>{1, 2, 7});
  CHECK_THROWS_WITH(decode::NoRepeatNgramProcessor(0), Catch::Contains("no_repeat_ngram"));
  CHECK_THROWS_WITH(decode::MinLengthProcessor(-1, kEos), Catch::Contains("min_length"));
}
