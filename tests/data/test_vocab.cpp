#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <functional>
#include <iostream>
#include <sentencepiece_trainer.h>
#include <sstream>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "core/check.h"
#include "data/data_fixtures.h"
#include "data/vocab.h"

using namespace attn;
using attn::data::Vocab;
using attn::testing::TempDir;

namespace {

// What `body` writes to this process's standard error (descriptor 2, where SentencePiece logs).
std::string stderr_of(const TempDir& dir, const std::function<void()>& body) {
  const std::string path = dir.file("stderr.txt");
  std::fflush(stderr);
  std::cerr.flush();
  const int saved = dup(2), file = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  dup2(file, 2);
  close(file);
  auto restore = [&] {
    std::fflush(stderr);
    std::cerr.flush();
    dup2(saved, 2);
    close(saved);
  };
  try {
    body();
  } catch (...) {
    restore();
    throw;
  }
  restore();
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("a trained vocabulary has the requested size and the fixed special ids", "[data][vocab]") {
  for (const std::string type : {"unigram", "bpe"}) {
    Vocab vocab = Vocab::load(testing::tiny_vocab_model(type));
    CHECK(vocab.size() == 100);
    CHECK(vocab.pad_id() == 0);
    CHECK(vocab.unk_id() == 1);
    CHECK(vocab.bos_id() == 2);
    CHECK(vocab.eos_id() == 3);
    CHECK(vocab.piece(1) == "<unk>");
    CHECK(vocab.piece(2) == "<s>");
    CHECK(vocab.piece(3) == "</s>");
    CHECK(vocab.piece_to_id("</s>") == 3);
  }
}

TEST_CASE("encode then decode gives the text back", "[data][vocab]") {
  for (const std::string type : {"unigram", "bpe"}) {
    Vocab vocab = Vocab::load(testing::tiny_vocab_model(type));
    const std::string text = "kato rina melu sope";
    auto ids = vocab.encode(text);
    REQUIRE(!ids.empty());
    for (int32_t id : ids) CHECK(id > data::kEosId);  // plain text: no special id, no unk
    CHECK(vocab.decode(ids) == text);
  }
}

TEST_CASE("decode stops at eos and skips pad and bos", "[data][vocab]") {
  Vocab vocab = Vocab::load(testing::tiny_vocab_model("unigram"));
  auto ids = vocab.encode("kato rina");
  std::vector<int32_t> framed = {data::kBosId};
  framed.insert(framed.end(), ids.begin(), ids.end());
  framed.push_back(data::kPadId);
  framed.push_back(data::kEosId);
  auto tail = vocab.encode("melu");
  framed.insert(framed.end(), tail.begin(), tail.end());
  CHECK(vocab.decode(framed) == "kato rina");
  CHECK_THROWS_AS(vocab.decode({vocab.size()}), Error);
  CHECK_THROWS_AS(vocab.piece(-1), Error);
}

TEST_CASE("invalid UTF-8 encodes to unk instead of failing", "[data][vocab]") {
  Vocab vocab = Vocab::load(testing::tiny_vocab_model("bpe"));
  std::vector<int32_t> ids;
  REQUIRE_NOTHROW(ids = vocab.encode("ka\xff\xfe to \xc3"));
  CHECK(std::count(ids.begin(), ids.end(), data::kUnkId) >= 2);
}

TEST_CASE("train_vocab errors name the inputs", "[data][vocab]") {
  TempDir directory;
  data::VocabTrainOptions options;
  options.inputs = {directory.file("missing.txt")};
  options.model_prefix = directory.file("m");
  options.vocab_size = 64;
  CHECK_THROWS_WITH(data::train_vocab(options), Catch::Contains("missing.txt"));

  // Too few distinct words to fill the vocabulary: a clear error, and no model left behind.
  const std::string small = directory.file("small.txt");
  testing::write_file(small, "ka to\nto ka\nka ka to\n");
  options.inputs = {small};
  options.vocab_size = 500;
  CHECK_THROWS_WITH(data::train_vocab(options), Catch::Contains("small.txt") && Catch::Contains("500"));
  CHECK(!std::filesystem::exists(directory.file("m.model")));
}

TEST_CASE("loading a missing model names its path", "[data][vocab]") {
  CHECK_THROWS_WITH(Vocab::load("no/such/spm.model"), Catch::Contains("no/such/spm.model"));
}

TEST_CASE("a model with other special ids is refused", "[data][vocab]") {
  TempDir directory;
  const std::string corpus = directory.file("corpus.txt");
  testing::write_file(corpus, testing::synthetic_text(200, 3));
  // SentencePiece's own defaults: unk 0, bos 1, eos 2, no pad.
  auto status = sentencepiece::SentencePieceTrainer::Train({{"input", corpus},
                                                            {"model_prefix", directory.file("default")},
                                                            {"vocab_size", "60"},
                                                            {"hard_vocab_limit", "false"},
                                                            {"minloglevel", "2"}});
  REQUIRE(status.ok());
  CHECK_THROWS_WITH(Vocab::load(directory.file("default.model")), Catch::Contains("special ids"));
}

TEST_CASE("train_vocab refuses an input without text - naming it - before SentencePiece sees it", "[data][vocab]") {
  TempDir directory;
  data::VocabTrainOptions options;
  options.model_prefix = directory.file("m");
  options.vocab_size = 64;
  options.threads = 1;
  const std::string text = directory.file("text.txt"), empty = directory.file("empty.txt");
  testing::write_file(text, testing::synthetic_text(200, 5));
  SECTION("an empty file (SentencePiece: \"Internal: ...trainer_interface.cc(428) [!sentences_.empty()]\")") {
    testing::write_file(empty, "");
  }
  SECTION("only blank lines (SentencePiece aborts the process)") { testing::write_file(empty, "\n \n\t\r\n"); }
  options.inputs = {text, empty};
  CHECK_THROWS_WITH(data::train_vocab(options),
                    "train_vocab: input file '" + empty + "' has no text (it is empty or holds only blank lines)");
  CHECK_FALSE(std::filesystem::exists(directory.file("m.model")));
}

TEST_CASE("SentencePiece's own log lines do not reach standard error", "[data][vocab]") {
  TempDir directory;
  const std::string corpus = directory.file("corpus.txt");
  // A line over SentencePiece's 4192 bytes makes it log three "LOG(WARNING)" lines.
  testing::write_file(corpus, testing::synthetic_text(200, 5) + std::string(5000, 'k') + "\n");
  data::VocabTrainOptions options;
  options.inputs = {corpus};
  options.model_prefix = directory.file("m");
  options.vocab_size = 64;
  options.threads = 1;
  CHECK(stderr_of(directory, [&] { data::train_vocab(options); }) == "");
  CHECK(Vocab::load(directory.file("m.model")).size() == 64);
}

TEST_CASE("a file that is not a SentencePiece model is named - without SentencePiece's internals", "[data][vocab]") {
  TempDir directory;
  const std::string junk = directory.file("junk.model");
  testing::write_file(junk, "\x0a\x05trunc");
  CHECK_THROWS_WITH(Vocab::load(junk), "cannot load SentencePiece model '" + junk +
                                           "': it is not a SentencePiece model, or it is damaged");
  CHECK_THROWS_WITH(Vocab::load(directory.file("none.model")),
                    "cannot load SentencePiece model '" + directory.file("none.model") + "': it does not exist");
}

TEST_CASE("train_vocab gives inputs below sample_above_bytes to SentencePiece whole - as before sampling existed",
          "[data][vocab]") {
  TempDir directory;
  const std::string a = directory.file("a.txt"), b = directory.file("b.txt");
  testing::write_file(a, testing::synthetic_text(2000, 5));
  testing::write_file(b, testing::synthetic_text(1000, 6));
  data::VocabTrainOptions options;
  options.inputs = {a, b};
  options.model_prefix = directory.file("m");
  options.vocab_size = 80;
  options.max_sentences = 500;  // SentencePiece's own sample of the whole files
  options.seed = 3;
  options.threads = 1;
  data::train_vocab(options);
  // What train_vocab did before it sampled big inputs itself: the files straight to SentencePiece.
  sentencepiece::SetRandomGeneratorSeed(3);
  auto status = sentencepiece::SentencePieceTrainer::Train({{"input", a + "," + b},
                                                            {"model_prefix", directory.file("reference")},
                                                            {"model_type", "unigram"},
                                                            {"vocab_size", "80"},
                                                            {"character_coverage", "1.0"},
                                                            {"input_sentence_size", "500"},
                                                            {"shuffle_input_sentence", "true"},
                                                            {"num_threads", "1"},
                                                            {"pad_id", "0"},
                                                            {"unk_id", "1"},
                                                            {"bos_id", "2"},
                                                            {"eos_id", "3"},
                                                            {"hard_vocab_limit", "false"},
                                                            {"minloglevel", "4"}});
  REQUIRE(status.ok());
  auto text_of = [](const std::string& path) {
    std::stringstream text;
    text << std::ifstream(path).rdbuf();
    return text.str();
  };
  CHECK(text_of(directory.file("m.vocab")) == text_of(directory.file("reference.vocab")));
}
