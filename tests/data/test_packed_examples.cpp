#include <catch2/catch.hpp>

#include "data/packed_examples.h"

using namespace attn;

TEST_CASE("packed examples unpack to the very ids - indices and corpora they were given", "[data][stream]") {
  // Ids around every varint width: 1, 2, 3 and 5 bytes.
  const std::vector<int32_t> ids = {0, 1, 3, 127, 128, 16383, 16384, 2097151, 2097152, INT32_MAX};
  std::vector<data::Example> examples;
  for (size_t n = 0; n < ids.size(); ++n) {
    data::Example example;
    example.src.assign(ids.begin(), ids.begin() + long(n) + 1);
    example.tgt.assign(ids.rbegin(), ids.rbegin() + long(ids.size() - n));
    example.index = int64_t(n) * 1000003;
    example.corpus = int32_t(n % 3);
    examples.push_back(example);
  }
  data::PackedExamples packed;
  for (const data::Example& example : examples) packed.add(example);
  packed.shrink_to_fit();
  REQUIRE(packed.size() == examples.size());
  for (size_t i = 0; i < examples.size(); ++i) {
    INFO("pair " << i);
    const data::Example unpacked = packed.unpack(i);
    CHECK(unpacked.src == examples[i].src);
    CHECK(unpacked.tgt == examples[i].tgt);
    CHECK(unpacked.index == examples[i].index);
    CHECK(packed.corpus(i) == examples[i].corpus);
    CHECK(packed.length(i) == int32_t(std::max(examples[i].src.size(), examples[i].tgt.size())));
  }
}

TEST_CASE("ids of an 8k vocabulary take at most two bytes each when packed", "[data][stream]") {
  data::PackedExamples packed;
  data::Example example;
  for (int32_t id = 0; id < 8000; id += 7) example.src.push_back(id);
  example.tgt = example.src;
  for (int i = 0; i < 100; ++i) packed.add(example);
  packed.shrink_to_fit();
  const size_t ids = 100 * (example.src.size() + example.tgt.size());
  CHECK(packed.bytes() <= 2 * ids + 100 * 32);
}
