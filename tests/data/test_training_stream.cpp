// The streaming reader of training data: bounded windows, every pair once per epoch, weighted
// corpora, exact resume from a position, and alignment errors found while streaming.
#include <algorithm>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "core/check.h"
#include "data/data_fixtures.h"
#include "data/training_stream.h"

using namespace attn;
using attn::testing::TempDir;
using attn::testing::write_file;

namespace {

struct Corpus {
  std::string src, tgt;
};

Corpus make_corpus(const TempDir& dir, const std::string& name, int lines, uint64_t seed) {
  Corpus corpus{dir.file(name + ".src"), dir.file(name + ".tgt")};
  write_file(corpus.src, attn::testing::synthetic_text(lines, seed));
  write_file(corpus.tgt, attn::testing::synthetic_text(lines, seed + 1));
  return corpus;
}

data::Vocab tiny_vocab() { return data::Vocab::load(attn::testing::tiny_vocab_model("unigram")); }

data::StreamOptions options_with_window(int64_t buffer_pairs) {
  data::StreamOptions options;
  options.buffer_pairs = buffer_pairs;
  options.max_len = 1000;  // nothing skipped
  options.batching.batch_tokens = 160;
  options.batching.pad_multiple = 8;
  options.batching.seed = 7;
  return options;
}

data::TrainingStream stream_over(const std::vector<data::CorpusFiles>& corpora, const data::StreamOptions& options) {
  static const data::Vocab vocab = tiny_vocab();
  return data::TrainingStream(corpora, vocab, vocab, options);
}

// A batch by what identifies its rows: their line numbers, and their source ids.
struct BatchKey {
  std::vector<int64_t> indices;
  std::vector<int32_t> src;
  bool operator==(const BatchKey& other) const { return indices == other.indices && src == other.src; }
};

std::vector<BatchKey> take(data::TrainingStream& stream, int count) {
  std::vector<BatchKey> keys;
  for (int i = 0; i < count; ++i) {
    data::Batch batch = stream.next();
    keys.push_back({batch.indices, batch.src});
  }
  return keys;
}

}  // namespace

TEST_CASE("windows ramp up to buffer_pairs", "[data][stream]") {
  CHECK(data::window_capacity(1000000, 1) == 62500);
  CHECK(data::window_capacity(1000000, 2) == 125000);
  CHECK(data::window_capacity(1000000, 4) == 500000);
  CHECK(data::window_capacity(1000000, 5) == 1000000);
  CHECK(data::window_capacity(1000000, 50) == 1000000);
  CHECK(data::window_capacity(3, 1) == 1);
}

TEST_CASE("a window of 100 pairs over 10000: every pair once per epoch and each batch within one window",
          "[data][stream]") {
  TempDir dir;
  const Corpus corpus = make_corpus(dir, "big", 10000, 3);
  data::TrainingStream stream = stream_over({{corpus.src, corpus.tgt, 1.0}}, options_with_window(100));
  for (int64_t epoch = 1; epoch <= 2; ++epoch) {
    std::vector<int> seen(10000, 0);
    while (stream.epoch() == epoch) {
      data::Batch batch = stream.next();
      const auto [low, high] = std::minmax_element(batch.indices.begin(), batch.indices.end());
      INFO("epoch " << epoch << ", lines " << *low << ".." << *high);
      REQUIRE(*high - *low < 100);  // a window holds at most 100 consecutive lines
      for (int64_t index : batch.indices) ++seen[size_t(index)];
    }
    CHECK(std::count(seen.begin(), seen.end(), 1) == 10000);
  }
  CHECK(stream.pairs_seen() == std::vector<int64_t>{20000});
}

TEST_CASE("a corpus that fits in a window is read once and batched anew every epoch", "[data][stream]") {
  TempDir dir;
  const Corpus corpus = make_corpus(dir, "small", 300, 5);
  // Windows 1-4 hold 62, 125, 250 and 500 pairs: epoch 1 spans three windows, later epochs one.
  data::TrainingStream stream = stream_over({{corpus.src, corpus.tgt, 1.0}}, options_with_window(1000));
  std::map<int64_t, std::multiset<int64_t>> lines_by_epoch;
  std::map<int64_t, std::vector<std::vector<int64_t>>> order_by_epoch;
  while (stream.epoch() <= 3) {
    const int64_t epoch = stream.epoch();
    data::Batch batch = stream.next();
    lines_by_epoch[epoch].insert(batch.indices.begin(), batch.indices.end());
    order_by_epoch[epoch].push_back(batch.indices);
  }
  for (int64_t epoch = 1; epoch <= 3; ++epoch) {
    INFO("epoch " << epoch);
    CHECK(lines_by_epoch[epoch].size() == 300);
    CHECK(std::set<int64_t>(lines_by_epoch[epoch].begin(), lines_by_epoch[epoch].end()).size() == 300);
  }
  CHECK(order_by_epoch[2] != order_by_epoch[3]);  // reshuffled
  CHECK(stream.position().window == 5);
}

TEST_CASE("corpora weighted 3:1 are drawn 3:1", "[data][stream]") {
  TempDir dir;
  const Corpus a = make_corpus(dir, "a", 2000, 11), b = make_corpus(dir, "b", 2000, 13);
  data::TrainingStream stream = stream_over({{a.src, a.tgt, 3.0}, {b.src, b.tgt, 1.0}}, options_with_window(400));
  int64_t pairs = 0;
  while (pairs < 6000) pairs += stream.next().size;
  const std::vector<int64_t>& seen = stream.pairs_seen();
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] + seen[1] == pairs);
  const double ratio = double(seen[0]) / double(seen[1]);
  INFO("pairs seen " << seen[0] << " : " << seen[1]);
  CHECK(ratio == Approx(3.0).epsilon(0.1));
  // Corpus a has gone round twice, b not yet once: the epoch waits for every corpus.
  CHECK(seen[0] > 4000);
  CHECK(seen[1] < 2000);
  CHECK(stream.epoch() == 1);
}

TEST_CASE("a stream set to a saved position yields exactly the batches of an uninterrupted one", "[data][stream]") {
  TempDir dir;
  const Corpus a = make_corpus(dir, "a", 700, 17), b = make_corpus(dir, "b", 300, 19);
  std::vector<data::CorpusFiles> corpora = {{a.src, a.tgt, 1.0}};
  if (GENERATE(false, true)) corpora.push_back({b.src, b.tgt, 0.5});
  const int stop_after = GENERATE(0, 1, 13, 40, 77);
  INFO(corpora.size() << " corpora, stopped after " << stop_after << " batches");
  data::StreamOptions options = options_with_window(160);
  const bool augment = GENERATE(false, true);  // the training-only augmentation, drawn per window
  INFO("subword sampling and concatenation " << (augment ? "on" : "off"));
  if (augment) {
    options.sampling = {0.2, 8};
    options.concat = {0.5, 3};
  }
  data::TrainingStream uninterrupted = stream_over(corpora, options);
  std::vector<BatchKey> expected = take(uninterrupted, stop_after + 60);

  data::TrainingStream first = stream_over(corpora, options);
  take(first, stop_after);
  const data::StreamPosition saved = first.position();
  data::TrainingStream resumed = stream_over(corpora, options);
  resumed.set_position(saved);
  std::vector<BatchKey> rest = take(resumed, 60);
  CHECK(std::equal(rest.begin(), rest.end(), expected.begin() + stop_after));
  CHECK(resumed.pairs_seen() == uninterrupted.pairs_seen());
  CHECK(resumed.epoch() == uninterrupted.epoch());
}

namespace {

// Each line's source ids (eos excluded) in the batches of epochs 1..epochs.
using IdsByLine = std::map<int64_t, std::vector<int32_t>>;
std::vector<IdsByLine> source_ids_by_epoch(data::TrainingStream& stream, int64_t epochs) {
  std::vector<IdsByLine> result(static_cast<size_t>(epochs));
  while (stream.epoch() <= epochs) {
    const int64_t epoch = stream.epoch();
    const data::Batch batch = stream.next();
    for (int64_t row = 0; row < batch.size; ++row) {
      const auto begin = batch.src.begin() + row * batch.src_len;
      result[size_t(epoch - 1)][batch.indices[size_t(row)]] =
          std::vector<int32_t>(begin, begin + batch.src_lengths[size_t(row)] - 1);
    }
  }
  return result;
}

}  // namespace

TEST_CASE("subword sampling gives every epoch fresh segmentations of the same text - whatever the threads",
          "[data][stream][sampling]") {
  TempDir dir;
  const Corpus corpus = make_corpus(dir, "small", 200, 23);
  // The corpus fits in a window: without sampling, later epochs would reuse its encoding.
  data::StreamOptions options = options_with_window(1000);
  options.sampling = {0.1, 16};
  const data::Vocab vocab = tiny_vocab();
  auto run = [&](int threads, uint64_t seed) {
    data::StreamOptions o = options;
    o.threads = threads;
    o.batching.seed = seed;
    data::TrainingStream stream = stream_over({{corpus.src, corpus.tgt, 1.0}}, o);
    return source_ids_by_epoch(stream, 3);
  };
  const std::vector<IdsByLine> one = run(1, 7);
  const std::vector<std::string> lines = attn::testing::synthetic_lines(200, 23);
  int changed = 0;
  for (int64_t line = 0; line < 200; ++line) {
    for (const IdsByLine& epoch : one) {
      REQUIRE(epoch.count(line) == 1);
      CHECK(vocab.decode(epoch.at(line)) == vocab.decode(vocab.encode(lines[size_t(line)])));
    }
    if (one[1].at(line) != one[2].at(line)) ++changed;
  }
  CHECK(changed > 50);            // fresh draws in epoch 3, not epoch 2's again
  CHECK(run(3, 7) == one);        // the encoding threads change nothing
  CHECK(run(1, 8)[0] != one[0]);  // another seed, other segmentations
}

TEST_CASE("files of different lengths are an error naming both files and the line where one ended", "[data][stream]") {
  TempDir dir;
  const Corpus corpus = make_corpus(dir, "c", 500, 23);
  std::string tgt = attn::testing::synthetic_text(500, 24);
  size_t cut = 0;
  for (int line = 0; line < 321; ++line) cut = tgt.find('\n', cut) + 1;
  write_file(corpus.tgt, tgt.substr(0, cut));  // 321 lines against 500
  data::TrainingStream stream = stream_over({{corpus.src, corpus.tgt, 1.0}}, options_with_window(160));
  int64_t batches = 0;
  try {
    for (; batches < 1000; ++batches) stream.next();
    FAIL("no error");
  } catch (const Error& error) {
    CHECK(std::string(error.what()) == "the training corpus files differ in length: '" + corpus.tgt +
                                           "' ends after line 321 but '" + corpus.src +
                                           "' has a line 322; the two sides must align line by line");
  }
  CHECK(batches > 0);  // found while streaming, after the windows before it trained
  // Windows of 10, 20, 40, 80 and 160 pairs (lines 1-310) trained; the sixth met the end.
  CHECK(stream.pairs_seen() == std::vector<int64_t>{310});
  CHECK(stream.position().window == 5);
}

TEST_CASE("a corpus whose every pair is filtered out is an error - not an endless loop", "[data][stream]") {
  TempDir dir;
  const Corpus corpus = make_corpus(dir, "long", 50, 29);
  data::StreamOptions options = options_with_window(1000);
  options.max_len = 2;  // one token and eos: every synthetic sentence is longer
  data::TrainingStream stream = stream_over({{corpus.src, corpus.tgt, 1.0}}, options);
  CHECK_THROWS_WITH(stream.next(), Catch::StartsWith("no training pair is left after filtering"));
}

TEST_CASE("an empty corpus file is an error naming it", "[data][stream]") {
  TempDir dir;
  write_file(dir.file("e.src"), "");
  write_file(dir.file("e.tgt"), "");
  data::TrainingStream stream = stream_over({{dir.file("e.src"), dir.file("e.tgt"), 1.0}}, options_with_window(10));
  CHECK_THROWS_WITH(stream.next(), Catch::Contains(dir.file("e.src")) && Catch::Contains("has no lines"));
}
