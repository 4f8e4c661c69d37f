// Subword regularisation (vocab.sampling_alpha): sampled segmentations of unigram and BPE
// models, drawn from a key alone, always spelling the same text.
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "data/corpus.h"
#include "data/data_fixtures.h"
#include "data/vocab.h"

using namespace attn;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("sampled segmentations vary with the key - repeat with it - and decode to the same text",
          "[data][vocab][sampling]") {
  const std::string type = GENERATE("unigram", "bpe");
  INFO("vocab type " << type);
  const data::Vocab vocab = data::Vocab::load(attn::testing::tiny_vocab_model(type));
  CHECK(vocab.is_bpe() == (type == "bpe"));
  const data::SegmentationSampling sampling{0.1, 16};
  int varied = 0;
  const std::vector<std::string> lines = lines_of(attn::testing::synthetic_text(30, 3));
  for (const std::string& line : lines) {
    INFO(line);
    const std::vector<int32_t> best = vocab.encode(line);
    std::set<std::vector<int32_t>> seen;
    for (uint64_t key = 0; key < 12; ++key) {
      const std::vector<int32_t> ids = vocab.encode_sampled(line, sampling, key);
      CHECK(vocab.decode(ids) == vocab.decode(best));
      CHECK(ids == vocab.encode_sampled(line, sampling, key));  // a function of the key
      seen.insert(ids);
    }
    if (seen.size() > 1) ++varied;
  }
  CHECK(varied > int(lines.size()) * 3 / 4);
}

TEST_CASE("without sampling encode_sampled and encode_example give the deterministic segmentation",
          "[data][vocab][sampling]") {
  const std::string type = GENERATE("unigram", "bpe");
  const data::Vocab vocab = data::Vocab::load(attn::testing::tiny_vocab_model(type));
  for (const std::string& line : lines_of(attn::testing::synthetic_text(20, 5))) {
    CHECK(vocab.encode_sampled(line, {}, 42) == vocab.encode(line));
    data::Example example;
    REQUIRE(data::encode_example(line, line, vocab, vocab, 1000, example) == data::PairStatus::kept);
    std::vector<int32_t> expected = vocab.encode(line);
    expected.push_back(data::kEosId);
    CHECK(example.src == expected);
  }
}

TEST_CASE("BPE-dropout with a vanishing probability merges exactly as SentencePiece's BPE does",
          "[data][vocab][sampling]") {
  // The dropout re-implements SentencePiece's merge loop (its own draws cannot be keyed): with
  // no merge dropped it must find SentencePiece's segmentation.
  const data::Vocab vocab = data::Vocab::load(attn::testing::tiny_vocab_model("bpe"));
  const data::SegmentationSampling almost_off{1e-12, 1};
  for (const std::string& line : lines_of(attn::testing::synthetic_text(50, 9) + "x\n\n  ka  to \n")) {
    INFO(line);
    CHECK(vocab.encode_sampled(line, almost_off, 1) == vocab.encode(line));
  }
}
