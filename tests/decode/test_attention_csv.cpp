#include <fstream>
#include <memory>
#include <sstream>

#include <catch2/catch.hpp>

#include "csv_rows.h"
#include "data/vocab.h"
#include "decode/attention_csv.h"
#include "temp_dir.h"

using namespace attn;
using attn::testing::csv_fields;
using attn::testing::parse_attention_csv;

namespace {

// Pieces with every character RFC 4180 makes a writer quote, and SentencePiece's ▁.
std::string piece(int32_t id) {
  switch (id) {
    case data::kBosId:
      return "<s>";
    case data::kEosId:
      return "</s>";
    case 4:
      return "a,b";
    case 5:
      return "say \"hi\"";
    case 6:
      return "\xe2\x96\x81x y";  // "▁x y"
    default:
      return "\xe2\x96\x81w" + std::to_string(id);
  }
}

// A map whose weights count up from `first` in row-major (heads, queries, keys) order.
decode::SentenceMap counting_map(layers::AttentionKind kind, int layer, std::vector<int> heads, int64_t queries,
                                 int64_t keys, float first) {
  decode::SentenceMap map{kind, layer, heads, queries, keys, {}};
  for (int64_t i = 0; i < int64_t(heads.size()) * queries * keys; ++i) map.weights.push_back(first + float(i));
  return map;
}

// Sentence 7: source "a,b" "▁w9" </s>, target "say \"hi\"" "▁x y" </s>; an encoder map of two
// heads, a cross map averaged over heads and a decoder self-attention map of one head.
decode::SentenceAttention example_sentence() {
  decode::SentenceAttention sentence;
  sentence.index = 7;
  sentence.source = {4, 9, data::kEosId};
  sentence.target = {5, 6, data::kEosId};
  sentence.decoder_input = {data::kBosId, 5, 6};
  sentence.maps.push_back(counting_map(layers::AttentionKind::encoder_self, 0, {0, 1}, 3, 3, 0.f));
  sentence.maps.push_back(counting_map(layers::AttentionKind::cross, 2, {decode::kMeanHead}, 3, 3, 100.f));
  sentence.maps.push_back(counting_map(layers::AttentionKind::decoder_self, 1, {3}, 3, 3, 200.f));
  return sentence;
}

std::string written(const std::vector<decode::SentenceAttention>& sentences) {
  std::ostringstream out;
  decode::AttentionCsvWriter writer(out, piece, piece);
  for (const auto& sentence : sentences) writer.write(sentence);
  return out.str();
}

}  // namespace

TEST_CASE("csv_field quotes a comma - a quote and a space per RFC 4180 and leaves plain pieces bare",
          "[decode][attention_csv]") {
  CHECK(decode::csv_field("a,b") == "\"a,b\"");
  CHECK(decode::csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(decode::csv_field("\"") == "\"\"\"\"");
  CHECK(decode::csv_field("x y") == "\"x y\"");
  CHECK(decode::csv_field("\xe2\x96\x81word") == "\xe2\x96\x81word");  // ▁ is not a space
  CHECK(decode::csv_field("</s>") == "</s>");
  CHECK(decode::csv_field("") == "");
  for (const std::string text : {"a,b", "say \"hi\"", "x y", "\xe2\x96\x81w,\"q\" z"})
    CHECK(csv_fields("1," + decode::csv_field(text) + ",2") == std::vector<std::string>{"1", text, "2"});
}

TEST_CASE("the attention csv: exact header - one row per weight of each map - tokens by kind",
          "[decode][attention_csv]") {
  std::string text = written({example_sentence()});
  CHECK(text.substr(0, text.find('\n')) == "sentence,kind,layer,head,query_pos,query_token,key_pos,key_token,weight");
  std::vector<testing::AttentionRow> rows = parse_attention_csv(text);
  REQUIRE(rows.size() == 2 * 9 + 9 + 9);

  // Encoder rows first, head 1 query 2 key 0 = weight 9 + 6: source tokens on both axes.
  CHECK(text.find("7,enc_self,0,1,2,</s>,0,\"a,b\",15\n") != std::string::npos);
  // Cross: output tokens query source tokens; the head column of a mean map reads "mean".
  CHECK(text.find("7,cross,2,mean,0,\"say \"\"hi\"\"\",1,\xe2\x96\x81w9,101\n") != std::string::npos);
  // Decoder self-attention: keys are the decoder's inputs (<s> y1 y2), queries its outputs.
  CHECK(text.find("7,dec_self,1,3,1,\"\xe2\x96\x81x y\",0,<s>,203\n") != std::string::npos);
  for (const auto& row : rows) {
    CHECK(row.sentence == 7);
    CHECK(row.query_pos < 3);
    CHECK(row.key_pos < 3);
  }
  CHECK(rows.back().kind == "dec_self");
  CHECK(rows.back().query_token == "</s>");
  CHECK(rows.back().key_token == "\xe2\x96\x81x y");
  CHECK(rows.back().weight == 208.0);
}

TEST_CASE("the attention csv writes a sentence without maps as no rows", "[decode][attention_csv]") {
  decode::SentenceAttention empty;
  empty.index = 3;
  decode::SentenceAttention second = example_sentence();
  second.maps.resize(1);
  std::vector<testing::AttentionRow> rows = parse_attention_csv(written({empty, second, empty}));
  CHECK(rows.size() == 18);
  for (const auto& row : rows) CHECK(row.sentence == 7);
}

TEST_CASE("the attention csv refuses a map larger than its sentence", "[decode][attention_csv]") {
  decode::SentenceAttention sentence = example_sentence();
  sentence.maps[0].queries = 4;
  sentence.maps[0].weights.resize(2 * 4 * 3);
  std::ostringstream out;
  decode::AttentionCsvWriter writer(out, piece, piece);
  CHECK_THROWS_WITH(writer.write(sentence), Catch::Contains("4 x 3"));
}

TEST_CASE("the attention csv through the AttentionWriter interface: the same bytes - all in the file after finish",
          "[decode][attention_csv]") {
  decode::SentenceAttention empty;
  empty.index = 3;
  testing::TempDir dir;
  const std::string path = dir.file("attention.csv");
  std::ofstream file(path, std::ios::binary);
  std::unique_ptr<decode::AttentionWriter> writer = std::make_unique<decode::AttentionCsvWriter>(file, piece, piece);
  writer->write(example_sentence());
  writer->write(empty);
  writer->finish();
  // The file is still open: what it holds now is what finish() handed over.
  std::ifstream in(path, std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  CHECK(text == written({example_sentence(), empty}));
  CHECK(parse_attention_csv(text).size() == 2 * 9 + 9 + 9);
}
