#include <sstream>

#include <catch2/catch.hpp>

#include "core/check.h"
#include "data/corpus.h"
#include "data/data_fixtures.h"

using namespace attn;
using attn::testing::TempDir;
using attn::testing::write_file;

TEST_CASE("read_lines strips CRLF line endings", "[data][corpus]") {
  TempDir directory;
  const std::string path = directory.file("crlf.txt");
  write_file(path, "one\r\ntwo words\r\n\r\nlast\r\n");
  CHECK(data::read_lines(path) == std::vector<std::string>{"one", "two words", "", "last"});
  write_file(path, "no final newline\nx");
  CHECK(data::read_lines(path) == std::vector<std::string>{"no final newline", "x"});
}

TEST_CASE("read_lines of a stream keeps every byte but the line ends", "[data][corpus]") {
  std::istringstream stream(std::string("nul \0 inside\r\n\xff\xfe invalid\n\n \t \nlast", 34));
  CHECK(data::read_lines(stream, "stdin") ==
        std::vector<std::string>{std::string("nul \0 inside", 12), "\xff\xfe invalid", "", " \t ", "last"});
  std::istringstream empty("");
  CHECK(data::read_lines(empty, "stdin").empty());
  std::istringstream one("one\n");
  CHECK(data::read_lines(one, "stdin") == std::vector<std::string>{"one"});
}

TEST_CASE("read_lines names a missing file", "[data][corpus]") {
  CHECK_THROWS_WITH(data::read_lines("no/such/file.en"), Catch::Contains("no/such/file.en"));
}

TEST_CASE("read_parallel names both files and counts when lengths differ", "[data][corpus]") {
  TempDir directory;
  const std::string src = directory.file("train.en"), tgt = directory.file("train.it");
  write_file(src, "a\nb\nc\n");
  write_file(tgt, "x\ny\n");
  CHECK_THROWS_WITH(data::read_parallel(src, tgt),
                    Catch::Contains(src) && Catch::Contains(tgt) && Catch::Contains("3") && Catch::Contains("2"));
  write_file(tgt, "x\ny\nz\n");
  auto text = data::read_parallel(src, tgt);
  CHECK(text.src == std::vector<std::string>{"a", "b", "c"});
  CHECK(text.tgt == std::vector<std::string>{"x", "y", "z"});
}

TEST_CASE("read_parallel rejects an empty file", "[data][corpus]") {
  TempDir directory;
  const std::string src = directory.file("empty.en"), tgt = directory.file("full.it");
  write_file(src, "");
  write_file(tgt, "x\n");
  CHECK_THROWS_WITH(data::read_parallel(src, tgt), Catch::Contains("empty.en") && Catch::Contains("empty"));
}

TEST_CASE("encode_corpus appends eos and counts skipped pairs", "[data][corpus]") {
  auto vocab = data::Vocab::load(testing::tiny_vocab_model("unigram"));
  data::ParallelText text;
  text.src = {"kato rina", "", "ka", "melu sope dino kato rina melu sope dino kato", "to"};
  text.tgt = {"rina kato", "ka", "", "ka", "tomeludi"};
  const int max_len = 10;
  auto corpus = data::encode_corpus(text, vocab, vocab, max_len);

  CHECK(corpus.skipped_empty == 2);  // lines 1 and 2
  CHECK(corpus.skipped_long == 1);   // line 3
  CHECK(corpus.skipped() == 3);
  REQUIRE(corpus.examples.size() == 2);
  CHECK(corpus.examples[0].index == 0);
  CHECK(corpus.examples[1].index == 4);
  for (const auto& example : corpus.examples) {
    CHECK(example.src.back() == data::kEosId);
    CHECK(example.tgt.back() == data::kEosId);
    CHECK(static_cast<int>(example.src.size()) <= max_len);
  }
  auto expected = vocab.encode("kato rina");
  expected.push_back(data::kEosId);
  CHECK(corpus.examples[0].src == expected);
  CHECK(vocab.decode(corpus.examples[1].tgt) == "tomeludi");
}

TEST_CASE("encode_corpus (parallel) matches a serial encoding - in input order", "[data][corpus]") {
  auto vocab = data::Vocab::load(testing::tiny_vocab_model("bpe"));
  data::ParallelText text;
  std::string lines = testing::synthetic_text(300, 5);
  for (size_t begin = 0, end; (end = lines.find('\n', begin)) != std::string::npos; begin = end + 1) {
    text.src.push_back(lines.substr(begin, end - begin));
    text.tgt.push_back(text.src[text.src.size() / 2]);
  }
  const int max_len = 12;
  auto corpus = data::encode_corpus(text, vocab, vocab, max_len);
  REQUIRE(!corpus.examples.empty());
  CHECK(corpus.skipped_long > 0);
  CHECK(corpus.examples.size() + corpus.skipped() == text.src.size());
  int64_t previous = -1;
  for (const auto& example : corpus.examples) {
    CHECK(example.index > previous);
    previous = example.index;
    auto src = vocab.encode(text.src[example.index]);
    auto tgt = vocab.encode(text.tgt[example.index]);
    src.push_back(data::kEosId);
    tgt.push_back(data::kEosId);
    CHECK(example.src == src);
    CHECK(example.tgt == tgt);
  }
}

TEST_CASE("text_file_stats counts lines as read_lines does - and the lines with text", "[data][corpus]") {
  TempDir dir;
  const std::string path = dir.file("text.txt");
  const std::pair<std::string, std::pair<int64_t, int64_t>> cases[] = {
      {"", {0, 0}},
      {"\n", {1, 0}},
      {" \t\r\n\n\r\n", {3, 0}},
      {"a\nb\n", {2, 2}},
      {"a\nb", {2, 2}},  // a last line without "\n" counts
      {"a\r\n \r\nb\r\n", {3, 2}},
      {"\n\nx  \n", {3, 1}},
  };
  for (const auto& [text, expected] : cases) {
    INFO("text \"" << text << "\"");
    write_file(path, text);
    data::TextFileStats stats = data::text_file_stats(path);
    CHECK(stats.lines == expected.first);
    CHECK(stats.text_lines == expected.second);
    CHECK(stats.lines == int64_t(data::read_lines(path).size()));
  }
  CHECK_THROWS_WITH(data::text_file_stats(dir.file("missing.txt")), Catch::Contains(dir.file("missing.txt")));
}
