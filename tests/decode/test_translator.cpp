// Translator on hostile input, in process: one output per input line whatever the bytes, the
// invalid-byte rule (unk), truncation with a warning naming the line, the model's position
// limit on both sides, and very many lines.
#include <memory>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sstream>

#include <catch2/catch.hpp>

#include "core/parallel.h"
#include "data/data_fixtures.h"
#include "data/vocab.h"
#include "decode/translator.h"
#include "models/tiny_models.h"
#include "thread_count.h"

using namespace attn;
using attn::testing::ThreadCount;

namespace {

constexpr int64_t kPositions = 60;  // not a multiple of 8: batches must not pad past it

struct Fixture {
  data::Vocab vocab = data::Vocab::load(attn::testing::tiny_vocab_model("unigram"));
  std::unique_ptr<models::TransformerModel> model;
  std::unique_ptr<models::RnnAttentionModel> rnn;

  Fixture() {
    models::TransformerOptions options = attn::testing::tiny_transformer_options();
    options.source_vocab = options.target_vocab = vocab.size();
    options.max_positions = kPositions;
    model = std::make_unique<models::TransformerModel>(options, 5);
    models::RnnAttentionOptions rnn_options = attn::testing::tiny_rnn_options();
    rnn_options.source_vocab = rnn_options.target_vocab = vocab.size();
    rnn = std::make_unique<models::RnnAttentionModel>(rnn_options, 5);
  }

  decode::TranslateOptions options(int beam) const {
    decode::TranslateOptions options;
    options.search.beam = beam;
    options.batch_size = 64;
    options.max_source_tokens = options.search.max_output_tokens = kPositions;
    return options;
  }
  std::vector<decode::Translation> translate(const std::vector<std::string>& lines, int beam = 1) const {
    return decode::Translator(*model, vocab, vocab, options(beam)).translate(lines);
  }
};

// Routes spdlog to a string for the life of the object.
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(
        std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)));
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::logger> previous_;
};

std::string huge_line() {
  std::string line;
  while (line.size() < 100000) line += "kato rina mesolu ";
  return line;
}

int64_t count_of(const std::vector<int32_t>& ids, int32_t id) { return std::count(ids.begin(), ids.end(), id); }

}  // namespace

TEST_CASE("encode_lines: invalid bytes become unk - blank lines nothing - long lines are cut and named",
          "[decode][translator]") {
  Fixture fixture;
  LogCapture log;
  const std::vector<std::string> lines = {"",         " \t ",     "kato \xff\xfe rina", std::string("ka\0to", 5),
                                          "\xc3\x28", huge_line()};
  const std::vector<std::vector<int32_t>> ids = decode::encode_lines(lines, fixture.vocab, kPositions);
  REQUIRE(ids.size() == lines.size());
  CHECK(ids[0].empty());
  CHECK(ids[1].empty());
  for (size_t i = 2; i < lines.size(); ++i) {
    INFO("line " << i);
    REQUIRE_FALSE(ids[i].empty());
    CHECK(ids[i].back() == data::kEosId);
    CHECK(count_of(ids[i], data::kEosId) == 1);
  }
  CHECK(count_of(ids[2], data::kUnkId) >= 1);
  CHECK(count_of(ids[3], data::kUnkId) >= 1);  // NUL is no piece of this vocabulary
  CHECK(count_of(ids[4], data::kUnkId) >= 1);
  CHECK(int64_t(ids[5].size()) == kPositions);
  const std::string logged = log.text();
  CHECK_THAT(logged, Catch::Contains("input line 6 is longer than 59 tokens; using its first 59"));
  CHECK(std::count(logged.begin(), logged.end(), '\n') == 1);
}

TEST_CASE("source_batch pads to a multiple of 8 but never past the model's limit", "[decode][translator]") {
  std::vector<int32_t> longest(kPositions, 5), shorter(3, 5);
  CHECK(decode::source_batch({&longest, &shorter}, kPositions).src_len == kPositions);
  CHECK(decode::source_batch({&shorter}, kPositions).src_len == 8);
  CHECK(decode::source_batch({&longest}).src_len == 64);
  std::vector<int32_t> too_long(kPositions + 1, 5);
  CHECK_THROWS_WITH(decode::source_batch({&too_long}, kPositions), Catch::Contains("exceeds the limit of 60"));
}

TEST_CASE("hostile lines come back line-aligned and the cut line is named in a warning", "[decode][translator]") {
  Fixture fixture;
  const std::vector<std::string> lines = {"kato rina", "",      "   ", "\xff\xfe\xfd", std::string("\0\0", 2),
                                          huge_line(), "mesolu"};
  for (int beam : {1, 3}) {
    INFO("beam " << beam);
    LogCapture log;
    std::vector<decode::Translation> result = fixture.translate(lines, beam);
    REQUIRE(result.size() == lines.size());
    CHECK(result[1].nbest.empty());
    CHECK(result[1].text.empty());
    CHECK(result[2].nbest.empty());
    for (size_t i : {0, 3, 4, 5, 6}) {
      REQUIRE_FALSE(result[i].nbest.empty());
      CHECK(int64_t(result[i].nbest.front().tokens.size()) <= kPositions);
    }
    const std::string logged = log.text();
    CHECK_THAT(logged, Catch::Contains("input line 6 is longer than 59 tokens; using its first 59"));
    CHECK(std::count(logged.begin(), logged.end(), '\n') == 1);
  }
}

TEST_CASE("a source at the position limit never runs the decoder past the table", "[decode][translator]") {
  Fixture fixture;
  std::vector<int32_t> source(kPositions - 1, 7);
  source.push_back(data::kEosId);
  data::Batch batch = decode::source_batch({&source}, kPositions);
  decode::SearchOptions options = fixture.options(1).search;  // 1.5 x 60 + 10 = 100 > 60
  for (int beam : {1, 2}) {
    options.beam = beam;
    const std::vector<std::vector<decode::Hypothesis>> found = decode::search(*fixture.model, batch, options, {1});
    REQUIRE_FALSE(found.front().empty());
    CHECK(int64_t(found.front().front().tokens.size()) <= kPositions);
  }
  // Without the cap the decoder would run into the end of the position table.
  options.beam = 1;
  options.max_output_tokens = 0;
  options.max_len_extra = kPositions;
  CHECK_THROWS_WITH(decode::greedy_search(*fixture.model, batch, options), Catch::Contains("max_positions"));
}

TEST_CASE("20000 short lines give 20000 translations in input order", "[decode][translator][slow]") {
  Fixture fixture;
  std::vector<std::string> lines = attn::testing::synthetic_lines(20000, 7);
  for (size_t i = 0; i < lines.size(); i += 997) lines[i] = "";
  lines.back() = lines[1];
  decode::TranslateOptions options = fixture.options(1);
  options.batch_size = 256;
  std::vector<decode::Translation> result =
      decode::Translator(*fixture.model, fixture.vocab, fixture.vocab, options).translate(lines);
  REQUIRE(result.size() == 20000);
  for (size_t i = 0; i < lines.size(); i += 997) CHECK(result[i].nbest.empty());
  CHECK(result.back().nbest.front().tokens == result[1].nbest.front().tokens);
  for (size_t i : {2, 4321, 19998}) {
    INFO("line " << i << ": " << lines[i]);
    CHECK(result[i].nbest.front().tokens == fixture.translate({lines[i]})[0].nbest.front().tokens);
  }
}

TEST_CASE("TranslationWindow: full at window_batches x batch_size lines - the translations of the whole input",
          "[decode][translator]") {
  Fixture fixture;
  std::vector<std::string> lines = attn::testing::synthetic_lines(50, 3);
  lines[7] = "";
  lines[31] = huge_line();
  decode::TranslateOptions options = fixture.options(2);
  options.batch_size = 4;
  options.window_batches = 3;
  decode::Translator translator(*fixture.model, fixture.vocab, fixture.vocab, options);
  LogCapture log;
  decode::TranslationWindow window(translator);
  std::vector<decode::Translation> streamed;
  for (size_t i = 0; i < lines.size(); ++i) {
    const bool full = window.add(lines[i]);
    CHECK(full == ((i + 1) % 12 == 0));  // bounded: never more than 3 batches of 4 lines
    CHECK(window.size() == (full ? 12 : (i + 1) % 12));
    if (full)
      for (auto& translation : window.translate()) streamed.push_back(std::move(translation));
    CHECK(window.size() == (i + 1) % 12);
  }
  for (auto& translation : window.translate()) streamed.push_back(std::move(translation));
  CHECK(window.empty());
  // The line number counts from the start of the input, not of its window.
  CHECK_THAT(log.text(), Catch::Contains("input line 32 is longer than 59 tokens"));

  const std::vector<decode::Translation> whole = translator.translate(lines);
  REQUIRE(streamed.size() == whole.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    INFO("line " << i);
    CHECK(streamed[i].text == whole[i].text);
    REQUIRE(streamed[i].nbest.size() == whole[i].nbest.size());
    for (size_t k = 0; k < whole[i].nbest.size(); ++k) CHECK(streamed[i].nbest[k].tokens == whole[i].nbest[k].tokens);
  }
  CHECK(streamed[7].nbest.empty());
}

TEST_CASE("length_sorted_batches cover every non-empty line once - sorted by length", "[decode][translator]") {
  const std::vector<int64_t> lengths = {5, 1, 9, 1, 0, 3, 7, 5, 2, 8, 1, 4};  // line 4 is empty
  std::vector<std::vector<int32_t>> encoded;
  for (int64_t length : lengths) encoded.emplace_back(length, data::kEosId);
  auto batches = decode::length_sorted_batches(encoded, 4);
  REQUIRE(batches.size() == 3);
  std::vector<int64_t> order;
  for (const auto& batch : batches) {
    CHECK(batch.size() <= 4);
    order.insert(order.end(), batch.begin(), batch.end());
  }
  CHECK(order == std::vector<int64_t>{1, 3, 10, 8, 5, 11, 0, 7, 6, 9, 2});  // stable among equal lengths
  CHECK(decode::length_sorted_batches({{}, {}}, 4).empty());
  CHECK_THROWS_WITH(decode::length_sorted_batches(encoded, 0), Catch::Contains("batch size 0"));
}

TEST_CASE("length_sorted_batches with a token budget: the same order - no batch over the budget",
          "[decode][translator]") {
  const std::vector<int64_t> lengths = {5, 1, 9, 1, 0, 3, 7, 5, 2, 8, 1, 4, 30, 6};  // line 4 is empty
  std::vector<std::vector<int32_t>> encoded;
  for (int64_t length : lengths) encoded.emplace_back(length, data::kEosId);
  const auto flat = [](const std::vector<std::vector<int64_t>>& batches) {
    std::vector<int64_t> order;
    for (const auto& batch : batches) order.insert(order.end(), batch.begin(), batch.end());
    return order;
  };
  const auto unbounded = decode::length_sorted_batches(encoded, 4);
  CHECK(decode::length_sorted_batches(encoded, 4, 0) == unbounded);    // 0: no budget
  CHECK(decode::length_sorted_batches(encoded, 4, 120) == unbounded);  // 4 x 30 fits: the budget never binds
  for (int64_t budget : {1, 8, 16, 24}) {
    INFO("budget " << budget);
    const auto batches = decode::length_sorted_batches(encoded, 4, budget);
    CHECK(flat(batches) == flat(unbounded));  // the same length-sorted order, cut more often
    CHECK(batches.size() > unbounded.size());
    for (const auto& batch : batches) {
      CHECK(batch.size() <= 4);
      int64_t longest = 0;
      for (int64_t line : batch) longest = std::max<int64_t>(longest, lengths[line]);
      if (batch.size() > 1) CHECK(int64_t(batch.size()) * longest <= budget);  // one sentence may exceed it
    }
  }
  // 16 tokens: lengths {1, 1, 1, 2} (4 x 2), {3, 4, 5} (3 x 5; a fourth 5 would make 20), {5, 6},
  // {7, 8} (2 x 8), {9}, {30} (alone, over the budget).
  CHECK(decode::length_sorted_batches(encoded, 4, 16) ==
        std::vector<std::vector<int64_t>>{{1, 3, 10, 8}, {5, 11, 0}, {7, 13}, {6, 9}, {2}, {12}});
  CHECK_THROWS_WITH(decode::length_sorted_batches(encoded, 4, -1), Catch::Contains("batch tokens -1"));
}

TEST_CASE("a token budget gives the translations of no budget - in input order", "[decode][translator]") {
  Fixture fixture;
  std::vector<std::string> lines = attn::testing::synthetic_lines(150, 11);
  for (size_t i = 0; i < 150; i += 10) lines[i] += " " + lines[i + 1] + " " + lines[i + 2];  // some long lines
  lines[7] = "";
  for (int beam : {1, 3}) {
    INFO("beam " << beam);
    decode::TranslateOptions options = fixture.options(beam);
    options.batch_size = 16;
    const auto unbounded = decode::Translator(*fixture.model, fixture.vocab, fixture.vocab, options).translate(lines);
    options.batch_tokens = 40;  // a few sentences per batch, the long ones alone
    const auto budgeted = decode::Translator(*fixture.model, fixture.vocab, fixture.vocab, options).translate(lines);
    REQUIRE(budgeted.size() == lines.size());
    CHECK(budgeted[7].nbest.empty());
    for (size_t i = 0; i < lines.size(); ++i) {
      INFO("line " << i << ": " << lines[i]);
      CHECK(budgeted[i].text == unbounded[i].text);
      if (!lines[i].empty())
        CHECK(budgeted[i].source == decode::encode_lines({lines[i]}, fixture.vocab, kPositions)[0]);
    }
  }
}

TEST_CASE(
    "batches decoded at once on a thread each give the translations of one batch at a time - every family and search",
    "[decode][translator]") {
  Fixture fixture;
  std::vector<std::string> lines = attn::testing::synthetic_lines(60, 13);
  lines[5] = "";
  ThreadCount threads(3);
  const std::pair<std::string, const models::Seq2SeqModel*> models[] = {{"transformer", fixture.model.get()},
                                                                        {"rnn", fixture.rnn.get()}};
  for (const auto& [family, model] : models) {
    for (const char* search : {"greedy", "beam 3", "sampling"}) {
      INFO(family << ", " << search);
      decode::TranslateOptions options = fixture.options(std::string(search) == "beam 3" ? 3 : 1);
      options.search.nbest = options.search.beam;
      options.search.sampling.enabled = std::string(search) == "sampling";
      options.batch_size = 4;  // 15 batches
      options.parallel_batches = false;
      const auto one_at_a_time = decode::Translator(*model, fixture.vocab, fixture.vocab, options).translate(lines);
      options.parallel_batches = true;
      const decode::Translator translator(*model, fixture.vocab, fixture.vocab, options);
      const auto encoded = decode::encode_lines(lines, fixture.vocab, kPositions);
      const uint64_t loops_before = parallel_loops_started();
      const auto at_once = translator.translate_ids(encoded);
      // One loop handed out, a batch a piece; everything inside a batch ran on its thread.
      CHECK(parallel_loops_started() - loops_before == 1);
      REQUIRE(at_once.size() == lines.size());
      CHECK(at_once[5].nbest.empty());
      for (size_t i = 0; i < lines.size(); ++i) {
        INFO("line " << i << ": " << lines[i]);
        CHECK(at_once[i].text == one_at_a_time[i].text);
        CHECK(at_once[i].source == one_at_a_time[i].source);
        REQUIRE(at_once[i].nbest.size() == one_at_a_time[i].nbest.size());
        for (size_t k = 0; k < at_once[i].nbest.size(); ++k) {
          CHECK(at_once[i].nbest[k].tokens == one_at_a_time[i].nbest[k].tokens);
          CHECK(at_once[i].nbest[k].score == one_at_a_time[i].nbest[k].score);
        }
      }
    }
  }
}

TEST_CASE("translate_options reads decode.* and caps lengths at the model's limit for every family",
          "[decode][translator]") {
  io::Config config;
  config.decode.beam = 7;
  config.decode.length_penalty = 0.25;
  config.decode.max_len_ratio = 2.0;
  config.decode.max_len_extra = 3;
  config.decode.batch_size = 11;
  config.decode.batch_tokens = 700;
  config.decode.parallel_batches = false;
  config.decode.min_length = 4;
  config.decode.no_repeat_ngram = 3;
  config.model.transformer.max_positions = 96;
  config.data.max_len = 20;
  config.model.type = ModelType::transformer;
  decode::TranslateOptions transformer = decode::translate_options(config);
  CHECK(transformer.search.beam == 7);
  CHECK(transformer.search.nbest == 1);
  CHECK(transformer.search.length_penalty == 0.25f);
  CHECK(transformer.search.max_len_ratio == 2.f);
  CHECK(transformer.search.max_len_extra == 3);
  CHECK(transformer.batch_size == 11);
  CHECK(transformer.batch_tokens == 700);
  CHECK_FALSE(transformer.parallel_batches);
  CHECK(transformer.search.min_length == 4);
  CHECK(transformer.search.no_repeat_ngram == 3);
  CHECK(transformer.max_source_tokens == 96);  // the position table
  CHECK(transformer.search.max_output_tokens == 96);
  config.model.type = ModelType::rnn;
  decode::TranslateOptions rnn = decode::translate_options(config);
  CHECK(rnn.max_source_tokens == 80);  // 4 x data.max_len: an RNN has no table, but a cap
  CHECK(rnn.search.max_output_tokens == 80);
}

TEST_CASE("an ensemble's translate_options are the first config's - with lengths capped by the smallest limit",
          "[decode][translator][ensemble]") {
  io::Config transformer;  // limit 96: its position table
  transformer.model.type = ModelType::transformer;
  transformer.model.transformer.max_positions = 96;
  transformer.decode.beam = 7;
  io::Config rnn;  // limit 80: 4 x data.max_len
  rnn.model.type = ModelType::rnn;
  rnn.data.max_len = 20;
  rnn.decode.beam = 3;
  for (const bool transformer_first : {true, false}) {
    INFO((transformer_first ? "transformer first" : "rnn first"));
    const decode::TranslateOptions options =
        decode::translate_options(transformer_first ? std::vector<const io::Config*>{&transformer, &rnn}
                                                    : std::vector<const io::Config*>{&rnn, &transformer});
    CHECK(options.search.beam == (transformer_first ? 7 : 3));
    CHECK(options.max_source_tokens == 80);
    CHECK(options.search.max_output_tokens == 80);
  }
  rnn.data.max_len = 40;  // now 160: the Transformer's 96 is the smaller
  CHECK(decode::translate_options({&rnn, &transformer}).search.max_output_tokens == 96);
}

TEST_CASE("a target prefix as text: the run's for every line - or each line's own", "[decode][translator]") {
  const Fixture fixture;
  const std::vector<std::string> lines = {"hello world", "", "a b c"};
  for (int beam : {1, 3}) {
    INFO("beam " << beam);
    decode::TranslateOptions options = fixture.options(beam);
    options.prefix = "the end";
    const std::vector<int32_t> pieces = fixture.vocab.encode(options.prefix);
    REQUIRE_FALSE(pieces.empty());
    const decode::Translator translator(*fixture.model, fixture.vocab, fixture.vocab, options);
    CHECK(translator.options().search.prefix == pieces);
    CHECK(translator.options().prefix.empty());  // so that options() can build another Translator
    const std::vector<decode::Translation> found = translator.translate(lines);
    for (size_t i : {size_t(0), size_t(2)}) {
      const std::vector<int32_t>& tokens = found[i].nbest.front().tokens;
      CHECK(std::vector<int32_t>(tokens.begin(), tokens.begin() + std::ptrdiff_t(pieces.size())) == pieces);
    }
    CHECK(found[1].nbest.empty());  // an empty line stays empty
    // Each line's own: "a" for the first, none for the last (what no prefix gives it).
    const std::vector<decode::Translation> own = translator.translate(lines, 1, {"a", "x", ""});
    CHECK(own[0].nbest.front().tokens.front() == fixture.vocab.encode("a").front());
    CHECK(own[1].nbest.empty());
    CHECK(own[2].nbest.front().tokens == fixture.translate({lines[2]}, beam)[0].nbest.front().tokens);
    CHECK_THROWS_WITH(translator.translate(lines, 1, {"a"}), Catch::Contains("1 prefixes for 3 lines"));
  }
  decode::TranslateOptions both = fixture.options(1);
  both.prefix = "a";
  both.search.prefix = {5};
  CHECK_THROWS_WITH(decode::Translator(*fixture.model, fixture.vocab, fixture.vocab, both),
                    Catch::Contains("both as text and as ids"));
}
