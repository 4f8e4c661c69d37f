#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "core/check.h"
#include "data/corpus.h"
#include "data/data_fixtures.h"
#include "data/line_sample.h"
#include "data/vocab.h"

using namespace attn;
using attn::testing::TempDir;

namespace {

// `lines` distinct numbered lines ("NAME 17 ..."), with CRLF ends, a blank line every tenth.
std::string numbered_text(const std::string& name, int lines) {
  std::string text;
  for (int i = 0; i < lines; ++i) {
    text += name + " " + std::to_string(i) + " kato rina melu sope" + (i % 7 == 0 ? " dira vone" : "") + "\r\n";
    if (i % 10 == 0) text += " \t\n";
  }
  return text;
}

data::LineSampleOptions sampling(int64_t lines, uint64_t seed) {
  data::LineSampleOptions options;
  options.lines = lines;
  options.seed = seed;
  options.block_bytes = 1024;  // many blocks in a small file
  return options;
}

std::string slurp(const std::string& path) {
  std::stringstream text;
  text << std::ifstream(path, std::ios::binary).rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("has_text: a blank line holds only space - tab - CR - VT or FF", "[data][line_sample]") {
  CHECK_FALSE(data::has_text(""));
  CHECK_FALSE(data::has_text(" \t\r\v\f"));
  CHECK(data::has_text("  a "));
  CHECK(data::has_text("\xc3\xa8"));
}

TEST_CASE("sample_lines draws N real lines deterministically from every file in proportion", "[data][line_sample]") {
  TempDir dir;
  const std::string a = dir.file("a.txt"), b = dir.file("b.txt");
  testing::write_file(a, numbered_text("alpha", 3000));
  testing::write_file(b, numbered_text("beta", 1000));
  std::set<std::string> real;
  for (const auto& path : {a, b})
    for (const auto& line : data::read_lines(path))
      if (data::has_text(line)) real.insert(line);

  const data::LineSample sample = data::sample_lines({a, b}, sampling(800, 7));
  REQUIRE(sample.lines.size() == 800);
  // Every line is a real text line, stripped of "\r", and none is drawn twice.
  for (const auto& line : sample.lines) CHECK(real.count(line) == 1);
  CHECK(std::set<std::string>(sample.lines.begin(), sample.lines.end()).size() == 800);
  // a is about three times b's size: its share of the lines is its share of the bytes.
  REQUIRE(sample.files.size() == 2);
  const double size_a = double(std::filesystem::file_size(a)), size_b = double(std::filesystem::file_size(b));
  CHECK(std::abs(double(sample.files[0].lines) - 800 * size_a / (size_a + size_b)) < 1);
  CHECK(sample.files[0].lines + sample.files[1].lines == 800);
  const auto from_a = std::count_if(sample.lines.begin(), sample.lines.end(),
                                    [](const std::string& line) { return line.rfind("alpha ", 0) == 0; });
  CHECK(from_a == sample.files[0].lines);
  CHECK(from_a > 550);
  // Lines come from across the file, not from its head.
  const auto late = std::count_if(sample.lines.begin(), sample.lines.end(), [](const std::string& line) {
    return line.rfind("alpha ", 0) == 0 && std::stoi(line.substr(6)) >= 1500;
  });
  CHECK(late > 100);

  CHECK(data::sample_lines({a, b}, sampling(800, 7)).lines == sample.lines);
  CHECK(data::sample_lines({a, b}, sampling(800, 8)).lines != sample.lines);
}

TEST_CASE("sample_lines reads far fewer bytes than the file for a small sample", "[data][line_sample]") {
  TempDir dir;
  const std::string big = dir.file("big.txt");
  testing::write_file(big, numbered_text("gamma", 40000));
  const int64_t size = static_cast<int64_t>(std::filesystem::file_size(big));
  const data::LineSample sample = data::sample_lines({big}, sampling(100, 1));
  CHECK(sample.lines.size() == 100);
  CHECK(sample.files[0].bytes_read < size / 100);
}

TEST_CASE("sample_lines takes every text line when N exceeds them and counts what it could not",
          "[data][line_sample]") {
  TempDir dir;
  const std::string a = dir.file("a.txt");
  // A long line across several blocks, a last line without "\n", blank lines.
  const std::string long_line(3000, 'x');
  testing::write_file(a, numbered_text("delta", 200) + long_line + "\n\n" + "last line");
  const data::LineSample sample = data::sample_lines({a}, sampling(100000, 3));
  std::vector<std::string> expected;
  for (const auto& line : data::read_lines(a))
    if (data::has_text(line)) expected.push_back(line);
  std::vector<std::string> drawn = sample.lines;
  std::sort(drawn.begin(), drawn.end());
  std::sort(expected.begin(), expected.end());
  CHECK(drawn == expected);
  CHECK(sample.files[0].quota == 100000);
  CHECK(sample.files[0].lines == static_cast<int64_t>(expected.size()));
}

TEST_CASE("sample_lines looks at every non-empty file and names one it cannot read", "[data][line_sample]") {
  TempDir dir;
  const std::string big = dir.file("big.txt"), tiny = dir.file("tiny.txt"), blank = dir.file("blank.txt");
  testing::write_file(big, numbered_text("eps", 5000));
  testing::write_file(tiny, "one line\n");
  testing::write_file(blank, "\n \n\t\r\n");
  const data::LineSample sample = data::sample_lines({big, tiny, blank}, sampling(10, 1));
  CHECK(sample.files[1].quota == 1);  // its proportional share rounds to 0
  CHECK(sample.files[1].lines == 1);
  CHECK(sample.files[2].lines == 0);
  CHECK_THROWS_WITH(data::sample_lines({dir.file("none.txt")}, sampling(10, 1)), Catch::Contains("none.txt"));
}

TEST_CASE("train_vocab trains a sampled vocabulary from big inputs and leaves no sample behind",
          "[data][line_sample]") {
  TempDir dir;
  const std::string corpus = dir.file("corpus.txt");
  testing::write_file(corpus, testing::synthetic_text(3000, 5));
  data::VocabTrainOptions options;
  options.inputs = {corpus};
  options.model_prefix = dir.file("m");
  options.vocab_size = 64;
  options.threads = 1;
  options.max_sentences = 500;
  options.sample_above_bytes = 1000;  // "big" for the test
  data::train_vocab(options);
  CHECK(data::Vocab::load(dir.file("m.model")).size() == 64);
  CHECK_FALSE(std::filesystem::exists(dir.file("m.sample.txt")));
  // The sample, not the corpus, reached SentencePiece: the sampled model differs from the
  // whole-corpus one.
  options.model_prefix = dir.file("whole");
  options.sample_above_bytes = int64_t{1} << 40;
  data::train_vocab(options);
  CHECK(slurp(dir.file("m.vocab")) != slurp(dir.file("whole.vocab")));

  SECTION("an input without text is refused by name, and the sample is removed") {
    const std::string blank = dir.file("blank.txt");
    testing::write_file(blank, std::string(5000, '\n'));
    options.inputs = {corpus, blank};
    options.model_prefix = dir.file("b");
    options.sample_above_bytes = 1000;
    CHECK_THROWS_WITH(data::train_vocab(options),
                      "train_vocab: input file '" + blank + "' has no text (it is empty or holds only blank lines)");
    CHECK_FALSE(std::filesystem::exists(dir.file("b.sample.txt")));
    CHECK_FALSE(std::filesystem::exists(dir.file("b.model")));
  }
  SECTION("a failed training removes the sample too") {
    options.model_prefix = dir.file("f");
    options.sample_above_bytes = 1000;
    options.vocab_size = 5000;  // more pieces than the sample yields
    CHECK_THROWS_WITH(data::train_vocab(options), Catch::Contains("5000"));
    CHECK_FALSE(std::filesystem::exists(dir.file("f.sample.txt")));
  }
}
