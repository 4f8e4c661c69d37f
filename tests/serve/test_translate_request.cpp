#include <catch2/catch.hpp>

#include "serve/translate_request.h"

using namespace attn::serve;
using Catch::Contains;
using nlohmann::json;

namespace {

// The status and message of the HttpError `body` raises.
std::pair<int, std::string> refusal(const std::function<void()>& body) {
  try {
    body();
  } catch (const HttpError& error) {
    return {error.status(), error.what()};
  }
  return {0, ""};
}

}  // namespace

TEST_CASE("LibreTranslate JSON requests", "[serve][request]") {
  const TranslateRequest one = parse_translate_request(
      json{{"q", "Hello"}, {"source", "auto"}, {"target", "it"}, {"format", "html"}, {"alternatives", 2}});
  CHECK(one.q == std::vector<std::string>{"Hello"});
  CHECK_FALSE(one.batch);
  CHECK(one.source == "auto");
  CHECK(one.format == TextFormat::html);
  CHECK(one.alternatives == 2);
  const TranslateRequest many = parse_translate_request(json{{"q", {"a", "b"}}, {"source", "en"}, {"target", "it"}});
  CHECK(many.batch);
  CHECK(many.q.size() == 2);
  CHECK(many.format == TextFormat::text);
}

TEST_CASE("LibreTranslate form requests - as its clients send them", "[serve][request]") {
  const json fields = body_fields("q=Hello+world%21&source=en&target=it&api_key=k%201&alternatives=3",
                                  "application/x-www-form-urlencoded; charset=utf-8");
  const TranslateRequest request = parse_translate_request(fields);
  CHECK(request.q == std::vector<std::string>{"Hello world!"});
  CHECK(request.api_key == "k 1");
  CHECK(request.alternatives == 3);
}

TEST_CASE("bad requests get 400 with LibreTranslate's messages", "[serve][request]") {
  const auto translate = [](const json& fields) { return refusal([&] { parse_translate_request(fields); }); };
  CHECK(translate(json{{"source", "en"}, {"target", "it"}}) ==
        std::pair<int, std::string>{400, "Invalid request: missing q parameter"});
  CHECK(translate(json{{"q", "x"}, {"target", "it"}}).second == "Invalid request: missing source parameter");
  CHECK(translate(json{{"q", "x"}, {"source", "en"}}).second == "Invalid request: missing target parameter");
  CHECK_THAT(translate(json{{"q", 5}, {"source", "en"}, {"target", "it"}}).second, Contains("q must be a string"));
  CHECK_THAT(translate(json{{"q", {"a", 1}}, {"source", "en"}, {"target", "it"}}).second, Contains("array of strings"));
  CHECK(translate(json{{"q", "x"}, {"source", "en"}, {"target", "it"}, {"format", "pdf"}}).second ==
        "pdf format is not supported");
  CHECK_THAT(translate(json{{"q", "x"}, {"source", "en"}, {"target", "it"}, {"alternatives", -1}}).second,
             Contains("alternatives must be a whole number"));
  CHECK_THAT(translate(json{{"q", "x"}, {"source", "en"}, {"target", "it"}, {"alternatives", "2x"}}).second,
             Contains("alternatives must be a whole number"));
  CHECK_THAT(translate(json{{"q", "x"}, {"source", 3}, {"target", "it"}}).second, Contains("source must be a string"));

  CHECK_THAT(refusal([] { body_fields("{\"q\": ", "application/json"); }).second, Contains("not valid JSON"));
  CHECK_THAT(refusal([] { body_fields("[1]", "application/json"); }).second, Contains("must be a JSON object"));
  CHECK_THAT(refusal([] { body_fields("{\"q\": \"\xff\"}", "application/json"); }).second, Contains("not valid JSON"));
  CHECK_THAT(refusal([] { body_fields("q=%FF", "application/x-www-form-urlencoded"); }).second, Contains("UTF-8"));
  CHECK_THAT(refusal([] { body_fields(std::string(1000, '['), "application/json"); }).second, Contains("deeper"));
  CHECK(refusal([] { body_fields("x", "image/png"); }).first == 400);
  CHECK(refusal([] {
          parse_native_request(json{{"q", "x"}, {"alignments", 1}});
        }).second.find("Invalid request: alignments must be") == 0);
  CHECK(refusal([] { parse_native_request(json{{"q", "x"}, {"nbest", 0}}); }).first == 400);
}

TEST_CASE("request limits count characters and sentences", "[serve][request]") {
  const RequestLimits limits{5, 2};
  CHECK_NOTHROW(check_text_size({"caf\xC3\xA9", "x"}, limits));  // 5 code points, 6 bytes
  CHECK(refusal([&] { check_text_size({"abcdef"}, limits); }) ==
        std::pair<int, std::string>{400, "Invalid request: request (6) exceeds text limit (5)"});
  CHECK_NOTHROW(check_sentence_count(2, limits));
  CHECK_THAT(refusal([&] { check_sentence_count(3, limits); }).second, Contains("sentence limit (2)"));
  CHECK_NOTHROW(check_text_size({std::string(100000, 'a')}, RequestLimits{}));
}

TEST_CASE("/v1/translate's alignment fields: attn-translate's flags - from JSON or a form", "[serve][request]") {
  CHECK_FALSE(parse_native_request(json{{"q", "x"}}).alignments.has_value());
  CHECK_FALSE(parse_native_request(json{{"q", "x"}, {"alignments", false}}).alignments.has_value());
  const attn::decode::AlignmentExtraction defaults;
  const auto plain = parse_native_request(json{{"q", "x"}, {"alignments", true}}).alignments;
  REQUIRE(plain);
  CHECK(plain->layer == defaults.layer);
  CHECK(plain->head == defaults.head);
  CHECK(plain->word_linking == defaults.word_linking);
  // A form's strings.
  const auto form = parse_native_request(form_fields("q=x&alignments=pieces&alignment_layer=-1&alignment_head=1&"
                                                     "alignment_shift=1&alignment_threshold=0.5&alignment_words=any"))
                        .alignments;
  REQUIRE(form);
  CHECK(form->unit == attn::decode::AlignmentUnit::pieces);
  CHECK(form->layer == -1);
  CHECK(form->head == 1);
  CHECK(form->shifted);
  CHECK(form->threshold == 0.5f);
  CHECK(form->word_linking == attn::decode::WordLinking::any_piece);
  const auto error = [](const json& fields) { return refusal([&] { parse_native_request(fields); }).second; };
  CHECK(
      error({{"q", "x"}, {"alignments", true}, {"alignment_layer", 18446744073709551615ull}}).find("alignment_layer") !=
      std::string::npos);
  CHECK_THAT(error({{"q", "x"}, {"alignments", true}, {"alignment_layer", 0.5}}), Contains("whole number"));
  CHECK_THAT(error({{"q", "x"}, {"alignments", true}, {"alignment_head", -1}}), Contains("alignment_head"));
  CHECK_THAT(error({{"q", "x"}, {"alignments", true}, {"alignment_threshold", "nan"}}), Contains("from 0 to 1"));
  CHECK_THAT(error({{"q", "x"}, {"alignment_words", "any"}}), Contains("alignment_words needs alignments"));
}

TEST_CASE("/v1/translate's alignment fields left out take the run's own extraction", "[serve][request]") {
  attn::decode::AlignmentExtraction own;  // as a run's alignment.json names it
  own.layer = 0;
  own.head = 1;
  own.shifted = true;
  own.word_linking = attn::decode::WordLinking::any_piece;
  const auto plain = parse_native_request(json{{"q", "x"}, {"alignments", true}}, own).alignments;
  REQUIRE(plain);
  CHECK(plain->layer == 0);
  CHECK(plain->head == 1);
  CHECK(plain->shifted);
  CHECK(plain->word_linking == attn::decode::WordLinking::any_piece);
  CHECK(plain->unit == attn::decode::AlignmentUnit::words);
  const auto given =
      parse_native_request(
          json{{"q", "x"}, {"alignments", "pieces"}, {"alignment_head", "mean"}, {"alignment_shift", 0}}, own)
          .alignments;
  REQUIRE(given);
  CHECK(given->layer == 0);  // left out: the run's
  CHECK_FALSE(given->head.has_value());
  CHECK_FALSE(given->shifted);
  CHECK(given->unit == attn::decode::AlignmentUnit::pieces);
  CHECK_FALSE(parse_native_request(json{{"q", "x"}}, own).alignments.has_value());
}

TEST_CASE("/v1/translate's prefix: a string for every text - or one per text", "[serve][request]") {
  using Strings = std::vector<std::string>;
  CHECK(parse_native_request(json{{"q", "x"}}).prefix.empty());  // left out: the server's own
  CHECK(parse_native_request(json{{"q", "x"}, {"prefix", nullptr}}).prefix.empty());
  CHECK(parse_native_request(json{{"q", "x"}, {"prefix", "Ciao"}}).prefix == Strings{"Ciao"});
  CHECK(parse_native_request(json{{"q", {"x", "y"}}, {"prefix", "Ciao"}}).prefix == Strings{"Ciao", "Ciao"});
  CHECK(parse_native_request(json{{"q", {"x", "y"}}, {"prefix", {"Ciao", ""}}}).prefix == Strings{"Ciao", ""});
  CHECK(parse_native_request(json{{"q", "x"}, {"prefix", {"Ciao"}}}).prefix == Strings{"Ciao"});
  CHECK(parse_native_request(form_fields("q=x&prefix=Buon+giorno")).prefix == Strings{"Buon giorno"});

  const auto refused = [](const json& fields) { return refusal([&] { parse_native_request(fields); }); };
  CHECK(refused(json{{"q", {"x", "y"}}, {"prefix", {"Ciao"}}}) ==
        std::pair<int, std::string>{400, "Invalid request: prefix has 1 entries for 2 texts of q"});
  CHECK(refused(json{{"q", "x"}, {"prefix", 3}}) ==
        std::pair<int, std::string>{
            400, "Invalid request: prefix must be a string or an array of strings, one per text of q"});
  CHECK_THAT(refused(json{{"q", {"x", "y"}}, {"prefix", {"Ciao", 1}}}).second, Contains("prefix must be a string"));
  CHECK(refused(json{{"q", "x"}, {"prefix", {{"nested"}}}}).first == 400);
}

TEST_CASE("sentence_prefixes: a text's prefix goes to its first sentence - the others get the server's",
          "[serve][request]") {
  using Prefixes = std::vector<std::optional<std::string>>;
  const std::vector<TextTemplate> texts = {plain_text_template("One.\nTwo."), plain_text_template(" \n"),
                                           plain_text_template("Three.")};
  NativeRequest request = parse_native_request(json{{"q", {"One.\nTwo.", " \n", "Three."}}});
  CHECK(sentence_prefixes(request, texts) == Prefixes{std::nullopt, std::nullopt, std::nullopt});
  request.prefix = {"Uno", "Niente", ""};  // the blank text has no sentence to start
  CHECK(sentence_prefixes(request, texts) == Prefixes{"Uno", std::nullopt, ""});
}
