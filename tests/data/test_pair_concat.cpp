// Concatenated training pairs (data.concat_prob): joins of whole pairs, the same on both sides.
#include <catch2/catch.hpp>

#include "data/pair_concat.h"

using namespace attn;

namespace {

// Pair j: a head token 1000 + j, then 5000 + j repeated (j % 3 on the source, j % 4 on the
// target), then eos, so that a join can be read back as the list of pairs it joined.
data::Example pair_number(int j) {
  data::Example example;
  example.src.push_back(1000 + j);
  example.src.insert(example.src.end(), size_t(j % 3), 5000 + j);
  example.tgt.push_back(1000 + j);
  example.tgt.insert(example.tgt.end(), size_t(j % 4), 5000 + j);
  example.src.push_back(data::kEosId);
  example.tgt.push_back(data::kEosId);
  example.index = j;
  example.corpus = j % 2;
  return example;
}

// The pairs that `side` joins, checking that each part is whole; {} when it is not.
std::vector<int> parts_of(const std::vector<int32_t>& side, bool source) {
  std::vector<int> parts;
  REQUIRE(!side.empty());
  REQUIRE(side.back() == data::kEosId);
  size_t at = 0;
  while (at + 1 < side.size()) {
    const int j = side[at] - 1000;
    if (j < 0 || j >= 1000) return {};
    const size_t body = size_t(source ? j % 3 : j % 4);
    for (size_t k = 1; k <= body; ++k)
      if (at + k >= side.size() - 1 || side[at + k] != 5000 + j) return {};
    parts.push_back(j);
    at += body + 1;
  }
  return parts;
}

data::PackedExamples numbered_pairs(int count) {
  data::PackedExamples examples;
  for (int j = 0; j < count; ++j) examples.add(pair_number(j));
  return examples;
}

}  // namespace

TEST_CASE("concatenated pairs join whole pairs in the same order on both sides - within max_len", "[data][concat]") {
  const int max_pairs = GENERATE(2, 3, 4);
  INFO("concat_max " << max_pairs);
  const data::PackedExamples input = numbered_pairs(300);
  const int max_len = 12;  // four pairs fit about half the time
  int64_t joined = 0;
  const data::PackedExamples output = data::concatenate_pairs(input, {0.5, max_pairs}, max_len, 77, joined);
  REQUIRE(output.size() == input.size());
  int64_t counted = 0, longest = 1;
  for (size_t i = 0; i < output.size(); ++i) {
    const data::Example example = output.unpack(i);
    const std::vector<int> src_parts = parts_of(example.src, true), tgt_parts = parts_of(example.tgt, false);
    INFO("example " << i);
    REQUIRE(!src_parts.empty());
    CHECK(src_parts == tgt_parts);  // both sides, same pairs, same order
    CHECK(src_parts.front() == int(i));
    CHECK(int(src_parts.size()) <= max_pairs);
    CHECK(int(example.src.size()) <= max_len);
    CHECK(int(example.tgt.size()) <= max_len);
    CHECK(example.index == int64_t(i));
    CHECK(example.corpus == int(i % 2));
    if (src_parts.size() > 1) ++counted;
    longest = std::max<int64_t>(longest, int64_t(src_parts.size()));
  }
  CHECK(counted == joined);
  CHECK(joined > 80);  // half the pairs are drawn to join (~150); some longer joins do not fit
  CHECK(joined < 200);
  CHECK(longest == max_pairs);

  int64_t again = 0;
  const data::PackedExamples same = data::concatenate_pairs(input, {0.5, max_pairs}, max_len, 77, again);
  const data::PackedExamples other = data::concatenate_pairs(input, {0.5, max_pairs}, max_len, 78, again);
  bool differs = false;
  for (size_t i = 0; i < output.size(); ++i) {
    CHECK(same.unpack(i).src == output.unpack(i).src);
    differs = differs || other.unpack(i).src != output.unpack(i).src;
  }
  CHECK(differs);
}

TEST_CASE("a concatenation longer than max_len is not made: the pair stays single", "[data][concat]") {
  const data::PackedExamples input = numbered_pairs(50);
  int64_t joined = -1;
  // Every pair has at least 1 token + eos a side: no two fit in 2 tokens.
  const data::PackedExamples output = data::concatenate_pairs(input, {1.0, 4}, 2, 5, joined);
  CHECK(joined == 0);
  for (size_t i = 0; i < input.size(); ++i) CHECK(output.unpack(i).src == input.unpack(i).src);
}
