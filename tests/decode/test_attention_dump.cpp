// Attention dumps of tiny trained models of both families, read back from the CSV: every row
// sums to 1, the causal mask holds, padding never appears, selection and alignments work.
#include <sstream>

#include <catch2/catch.hpp>

#include "csv_rows.h"
#include "data/data_fixtures.h"
#include "data/vocab.h"
#include "decode/alignment.h"
#include "decode/attention_csv.h"
#include "decode/attention_dump.h"
#include "decode/translator.h"
#include "models/tiny_models.h"

using namespace attn;
using attn::testing::AttentionRow;
using attn::testing::make_examples;
using attn::testing::parse_attention_csv;
using layers::AttentionKind;

namespace {

// Reversal pairs of different lengths (eos included: sources 2-6, targets 2-6 tokens).
const std::vector<std::pair<std::vector<int32_t>, std::vector<int32_t>>> kPairs = {{{4, 5, 6}, {6, 5, 4}},
                                                                                   {{7, 8}, {8, 7}},
                                                                                   {{9, 10, 4, 5}, {5, 4, 10, 9}},
                                                                                   {{6}, {6}},
                                                                                   {{10, 9, 8}, {8, 9, 10}},
                                                                                   {{5, 7, 9, 4, 6}, {6, 4, 9, 7, 5}},
                                                                                   {{8, 4}, {4, 8}},
                                                                                   {{7, 6, 5}, {5, 6, 7}}};

// Fits a model to kPairs for a few steps: a trained model, not a random one, with peaked maps.
template <class Model>
std::unique_ptr<Model> trained(std::unique_ptr<Model> model) {
  data::Batch batch = testing::batch_of(make_examples(kPairs));
  testing::fit(
      *model, [&](int) { return batch; }, 40, 1e-2f);
  return model;
}

// Two encoder and two decoder layers of two heads: selection has layers and heads to choose.
std::unique_ptr<models::TransformerModel> trained_transformer() {
  models::TransformerOptions options = testing::tiny_transformer_options();
  options.layer.width = 16;
  options.layer.ffn_width = 32;
  options.encoder_layers = options.decoder_layers = 2;
  return trained(std::make_unique<models::TransformerModel>(options, 5));
}

std::unique_ptr<models::RnnAttentionModel> trained_rnn() { return trained(testing::tiny_rnn(5)); }

std::vector<decode::SentenceAttention> collected(const models::Seq2SeqModel& model,
                                                 const decode::AttentionSelection& selection = {}) {
  std::vector<decode::SentenceAttention> sentences;
  // Batches of 3: several forward passes, each with padding on both sides.
  decode::collect_attention(model, make_examples(kPairs), selection, 3,
                            [&](const decode::SentenceAttention& sentence) { sentences.push_back(sentence); });
  return sentences;
}

std::string piece_name(int32_t id) { return "t" + std::to_string(id); }

std::vector<AttentionRow> dumped_rows(const std::vector<decode::SentenceAttention>& sentences) {
  std::ostringstream out;
  decode::AttentionCsvWriter writer(out, piece_name, piece_name);
  for (const auto& sentence : sentences) writer.write(sentence);
  return parse_attention_csv(out.str());
}

// The map (kind, layer) of `sentence`.
const decode::SentenceMap& find_map(const decode::SentenceAttention& sentence, AttentionKind kind, int layer) {
  const decode::SentenceMap* found = nullptr;
  for (const auto& map : sentence.maps)
    if (map.kind == kind && map.layer == layer) found = &map;
  REQUIRE(found);
  return *found;
}

}  // namespace

TEST_CASE("dumped attention rows of a trained transformer sum to 1 and padding never appears",
          "[decode][attention_dump]") {
  auto model = trained_transformer();
  std::vector<decode::SentenceAttention> sentences = collected(*model);
  REQUIRE(sentences.size() == kPairs.size());
  std::vector<AttentionRow> rows = dumped_rows(sentences);
  CHECK(testing::worst_row_sum_error(rows) < 1e-5);

  // Per sentence: 2 layers x 2 heads x (Ls^2 enc_self + n Ls cross + n^2 dec_self) rows.
  size_t expected = 0;
  for (const auto& [source, target] : kPairs) {
    size_t ls = source.size() + 1, n = target.size() + 1;
    expected += 2 * 2 * (ls * ls + n * ls + n * n);
  }
  CHECK(rows.size() == expected);
  for (const auto& row : rows) {
    const auto& [source, target] = kPairs.at(row.sentence);
    int64_t ls = int64_t(source.size()) + 1, n = int64_t(target.size()) + 1;
    CHECK(row.query_pos < (row.kind == "enc_self" ? ls : n));
    CHECK(row.key_pos < (row.kind == "dec_self" ? n : ls));
    CHECK(row.key_token != "t0");  // the padding id
    CHECK(row.query_token != "t0");
  }
  CHECK(rows.front().sentence == 0);
  CHECK(rows.back().sentence == int64_t(kPairs.size()) - 1);
}

TEST_CASE("dumped dec_self weights above the diagonal are exactly 0 - and the rest are not all 0",
          "[decode][attention_dump]") {
  auto model = trained_transformer();
  int above = 0, positive = 0;
  for (const auto& row : dumped_rows(collected(*model))) {
    if (row.kind != "dec_self") continue;
    if (row.key_pos > row.query_pos) {
      ++above;
      CHECK(row.weight == 0.0);
    } else {
      positive += row.weight > 0.0;
    }
  }
  CHECK(above > 0);
  CHECK(positive > 0);
}

TEST_CASE("dumped attention rows of a trained rnn: one cross map per sentence - rows sum to 1",
          "[decode][attention_dump]") {
  auto model = trained_rnn();
  std::vector<AttentionRow> rows = dumped_rows(collected(*model));
  CHECK(testing::worst_row_sum_error(rows) < 1e-5);
  size_t expected = 0;
  for (const auto& [source, target] : kPairs) expected += (source.size() + 1) * (target.size() + 1);
  CHECK(rows.size() == expected);
  for (const auto& row : rows) {
    CHECK(row.kind == "cross");
    CHECK(row.layer == 0);
    CHECK(row.head == "0");
    CHECK(row.key_pos <= int64_t(kPairs.at(row.sentence).first.size()));
  }
}

TEST_CASE("the dump keeps the reference's tokens: output tokens for queries - decoder inputs for dec_self keys",
          "[decode][attention_dump]") {
  auto model = testing::tiny_transformer();
  std::vector<decode::SentenceAttention> sentences = collected(*model);
  for (size_t i = 0; i < kPairs.size(); ++i) {
    std::vector<int32_t> source = kPairs[i].first, target = kPairs[i].second;
    source.push_back(data::kEosId);
    target.push_back(data::kEosId);
    std::vector<int32_t> input = {data::kBosId};
    input.insert(input.end(), target.begin(), target.end() - 1);
    CHECK(sentences[i].index == int64_t(i));
    CHECK(sentences[i].source == source);
    CHECK(sentences[i].target == target);
    CHECK(sentences[i].decoder_input == input);
  }
}

TEST_CASE("selection keeps one kind - layer and head - or the mean over the heads", "[decode][attention_dump]") {
  auto model = trained_transformer();
  std::vector<decode::SentenceAttention> all = collected(*model);

  decode::AttentionSelection one;
  one.kind = AttentionKind::cross;
  one.layer = 1;
  one.head = 1;
  std::vector<decode::SentenceAttention> picked = collected(*model, one);
  decode::AttentionSelection mean;
  mean.kind = AttentionKind::decoder_self;
  mean.average_heads = true;
  std::vector<decode::SentenceAttention> averaged = collected(*model, mean);

  for (size_t i = 0; i < all.size(); ++i) {
    REQUIRE(picked[i].maps.size() == 1);
    const decode::SentenceMap& full = find_map(all[i], AttentionKind::cross, 1);
    const decode::SentenceMap& map = picked[i].maps[0];
    CHECK(map.heads == std::vector<int>{1});
    for (int64_t q = 0; q < map.queries; ++q)
      for (int64_t k = 0; k < map.keys; ++k) CHECK(map.row(0, q)[k] == full.row(1, q)[k]);

    REQUIRE(averaged[i].maps.size() == 2);  // dec_self of layers 0 and 1
    for (const auto& map_mean : averaged[i].maps) {
      CHECK(map_mean.heads == std::vector<int>{decode::kMeanHead});
      const decode::SentenceMap& heads = find_map(all[i], AttentionKind::decoder_self, map_mean.layer);
      for (int64_t q = 0; q < map_mean.queries; ++q)
        for (int64_t k = 0; k < map_mean.keys; ++k)
          CHECK(map_mean.row(0, q)[k] == Approx((heads.row(0, q)[k] + heads.row(1, q)[k]) / 2).margin(1e-7));
    }
  }
  std::vector<AttentionRow> rows = dumped_rows(averaged);
  CHECK(testing::worst_row_sum_error(rows) < 1e-5);
  for (const auto& row : rows) CHECK(row.head == "mean");
}

TEST_CASE("a selection the model cannot give is an error naming what it has", "[decode][attention_dump]") {
  auto transformer = testing::tiny_transformer();  // one encoder and one decoder layer, two heads
  auto rnn = testing::tiny_rnn();
  decode::AttentionSelection layer;
  layer.kind = AttentionKind::cross;
  layer.layer = 3;
  CHECK_THROWS_WITH(collected(*transformer, layer),
                    Catch::Contains("layer 3 is out of range") && Catch::Contains("1 layer of cross attention"));
  decode::AttentionSelection head;
  head.head = 2;
  CHECK_THROWS_WITH(collected(*transformer, head), Catch::Contains("head 2") && Catch::Contains("2 heads"));
  decode::AttentionSelection kind;
  kind.kind = AttentionKind::encoder_self;
  CHECK_THROWS_WITH(collected(*rnn, kind), Catch::Contains("no enc_self attention (it has cross)"));
  CHECK_THROWS_WITH(layers::attention_kind_from_name("self"), Catch::Contains("enc_self, dec_self, cross"));
  CHECK(layers::attention_kind_from_name("dec_self") == AttentionKind::decoder_self);
}

TEST_CASE("alignment extraction: layer - heads - shift and argmax of the cross attention - no link to or from eos",
          "[decode][alignment]") {
  decode::SentenceAttention sentence;
  sentence.source = {4, 5, 6, data::kEosId};
  sentence.target = {7, 8, 9, data::kEosId};
  // Layer 0 aligns everything to source 0.
  decode::SentenceMap first{AttentionKind::cross, 0, {0, 1}, 4, 4, std::vector<float>(32, 0.f)};
  for (int64_t row = 0; row < 8; ++row) first.weights[row * 4] = 1.f;
  // Layer 1, two heads: their mean puts target 0 on source 2, target 1 on source 0, target 2
  // on the source eos (no link); head 0 alone puts target 0 on source 1.
  decode::SentenceMap last{AttentionKind::cross, 1, {0, 1}, 4, 4, {}};
  last.weights = {0.1f, 0.5f, 0.4f, 0.f, 0.7f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.1f, 0.7f, 0.f, 0.f, 0.f, 1.f,
                  0.1f, 0.1f, 0.8f, 0.f, 0.6f, 0.2f, 0.1f, 0.1f, 0.f,  0.1f, 0.2f, 0.7f, 1.f, 0.f, 0.f, 0.f};
  sentence.maps = {first, last};
  auto links = [&](const decode::AlignmentExtraction& extraction) {
    return align::hard_links(decode::cross_alignment(sentence, extraction));
  };
  decode::AlignmentExtraction extraction;  // the last layer, mean of the heads, own rows
  CHECK(links(extraction) == align::Links{{2, 0}, {0, 1}});
  extraction.head = 0;
  CHECK(links(extraction) == align::Links{{1, 0}, {0, 1}});
  extraction.head.reset();
  extraction.layer = 0;
  CHECK(links(extraction) == align::Links{{0, 0}, {0, 1}, {0, 2}});
  extraction.layer = -1;
  // Shifted: target j reads row j + 1 (mean rows 1, 2, 3: source 0, eos, source 0).
  extraction.shifted = true;
  CHECK(links(extraction) == align::Links{{0, 0}, {0, 2}});
  extraction.shifted = false;
  // The soft alignment: 3 target rows (eos dropped), 3 source columns and the eos as the null.
  const align::SoftAlignment soft = decode::cross_alignment(sentence, extraction);
  CHECK(soft.rows == 3);
  CHECK(soft.columns == 3);
  CHECK(soft.at(2, soft.null_column()) == Approx(0.7f));
  extraction.layer = 2;
  CHECK_THROWS_WITH(links(extraction), Catch::Contains("layer 2 is out of range") && Catch::Contains("2 layers"));
  extraction.layer = -1;
  extraction.head = 2;
  CHECK_THROWS_WITH(links(extraction), Catch::Contains("head 2 is out of range") && Catch::Contains("2 heads"));
}

TEST_CASE("word alignments: pieces starting with the word mark begin words - any piece link or the mean attention",
          "[decode][alignment]") {
  data::Vocab vocab = data::Vocab::load(testing::tiny_vocab_model("unigram"));
  // Two words of several pieces each on both sides; find pieces that start and continue words.
  std::vector<int32_t> starts, continuations;
  for (int32_t id = 4; id < vocab.size(); ++id)
    (vocab.piece(id).rfind("\xE2\x96\x81", 0) == 0 ? starts : continuations).push_back(id);
  REQUIRE(starts.size() >= 2);
  REQUIRE(!continuations.empty());
  const int32_t a = starts[0], b = starts[1], c = continuations[0];
  decode::SentenceAttention sentence;
  sentence.source = {a, c, b, data::kEosId};  // words: [a c] [b]
  sentence.target = {b, a, c, data::kEosId};  // words: [b] [a c]
  CHECK(decode::token_words(sentence.source, vocab) == align::WordOf{0, 0, 1, -1});
  CHECK(decode::token_words({c, a, data::kBosId}, vocab) == align::WordOf{0, 1, -1});  // no mark first: word 0
  // One head: target piece 0 -> source 2; piece 1 -> source 0 (0.4; source 1 has 0.3); piece 2 -> source 1 (0.5).
  decode::SentenceMap map{AttentionKind::cross, 0, {0}, 4, 4, {}};
  map.weights = {0.1f, 0.1f, 0.7f, 0.1f, 0.4f, 0.3f, 0.f, 0.3f, 0.2f, 0.5f, 0.3f, 0.f, 0.f, 0.f, 0.f, 1.f};
  sentence.maps = {map};
  decode::AlignmentExtraction extraction;
  extraction.unit = decode::AlignmentUnit::pieces;
  CHECK(decode::alignment_links(sentence, extraction, vocab, vocab) == align::Links{{2, 0}, {0, 1}, {1, 2}});
  extraction.unit = decode::AlignmentUnit::words;
  extraction.word_linking = decode::WordLinking::any_piece;
  CHECK(decode::alignment_links(sentence, extraction, vocab, vocab) == align::Links{{1, 0}, {0, 1}});
  // Mean attention: target word 0 = row 0 over source words [0.1 + 0.1, 0.7]: source word 1;
  // target word 1 = the mean of rows 1 and 2, [(0.7 + 0.7) / 2, (0 + 0.3) / 2]: source word 0.
  extraction.word_linking = decode::WordLinking::mean_attention;
  const align::SoftAlignment pieces = decode::cross_alignment(sentence, extraction);
  const align::SoftAlignment words = align::word_level(pieces, {0, 0, 1}, {0, 1, 1});
  CHECK(words.at(1, 0) == Approx(0.7f));
  CHECK(words.at(1, 1) == Approx(0.15f));
  CHECK(words.at(1, words.null_column()) == Approx(0.15f));
  CHECK(decode::alignment_links(sentence, extraction, vocab, vocab) == align::Links{{1, 0}, {0, 1}});
  // Threshold 0.3: piece links (2, 0), (0, 1), (1, 1), (1, 2), (2, 2) -> words (1, 0), (0, 1), (1, 1).
  extraction.threshold = 0.3f;
  extraction.unit = decode::AlignmentUnit::pieces;
  CHECK(decode::alignment_links(sentence, extraction, vocab, vocab) ==
        align::Links{{2, 0}, {0, 1}, {1, 1}, {1, 2}, {2, 2}});
  extraction.unit = decode::AlignmentUnit::words;
  extraction.word_linking = decode::WordLinking::any_piece;
  CHECK(decode::alignment_links(sentence, extraction, vocab, vocab) == align::Links{{1, 0}, {0, 1}, {1, 1}});
}

TEST_CASE("the dumper hands over every line in order - forced on the reference or on the model's translation",
          "[decode][attention_dump]") {
  data::Vocab vocab = data::Vocab::load(testing::tiny_vocab_model("unigram"));
  models::TransformerOptions options = testing::tiny_transformer_options();
  options.source_vocab = options.target_vocab = vocab.size();
  models::TransformerModel model(options, 3);
  decode::AttentionDumpOptions dump;
  dump.translate.batch_size = 2;
  dump.translate.search.beam = 1;
  decode::AttentionDumper dumper(model, vocab, vocab, dump);
  const std::vector<std::string> sources = {"kato rina", "", "meluso pe", "di", "gavo ne mi"};
  const std::vector<std::string> targets = {"rina kato", "ta", "", "di di", "mi ne gavo"};

  std::vector<decode::SentenceAttention> forced;
  dumper.forced(sources, targets, [&](const decode::SentenceAttention& s) { forced.push_back(s); });
  REQUIRE(forced.size() == sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    INFO("line " << i);
    CHECK(forced[i].index == int64_t(i));
    bool empty = sources[i].empty() || targets[i].empty();
    CHECK(forced[i].maps.empty() == empty);
    if (empty) continue;
    std::vector<int32_t> target = vocab.encode(targets[i]);
    target.push_back(data::kEosId);
    CHECK(forced[i].target == target);
    CHECK(forced[i].maps.size() == 3);
  }

  std::vector<decode::SentenceAttention> own;
  dumper.translated(sources, [&](const decode::SentenceAttention& s) { own.push_back(s); });
  decode::TranslateOptions translate;
  translate.search.beam = 1;
  std::vector<decode::Translation> translations = decode::Translator(model, vocab, vocab, translate).translate(sources);
  REQUIRE(own.size() == sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    INFO("line " << i);
    CHECK(own[i].index == int64_t(i));
    CHECK(own[i].maps.empty() == sources[i].empty());
    if (!sources[i].empty()) CHECK(own[i].target == translations[i].nbest.front().tokens);
  }

  CHECK_THROWS_WITH(dumper.forced(sources, {"a"}, [](const decode::SentenceAttention&) {}),
                    Catch::Contains("5 source lines but 1 target lines"));
}

TEST_CASE("nbest_alignments: each hypothesis its own forced links - the best as translation_alignments",
          "[decode][attention_dump]") {
  data::Vocab vocab = data::Vocab::load(testing::tiny_vocab_model("unigram"));
  models::TransformerOptions options = testing::tiny_transformer_options();
  options.source_vocab = options.target_vocab = vocab.size();
  options.decoder_layers = 2;
  models::TransformerModel model(options, 3);
  decode::TranslateOptions translate;
  translate.search.beam = translate.search.nbest = 3;
  const std::vector<std::string> sources = {"kato rina", "", "gavo ne mi", "di"};
  const std::vector<decode::Translation> translations =
      decode::Translator(model, vocab, vocab, translate).translate(sources);
  decode::AlignmentExtraction pieces;
  pieces.unit = decode::AlignmentUnit::pieces;
  decode::AlignmentExtraction words;
  words.threshold = 0.05f;
  words.layer = 0;
  const std::vector<std::vector<align::Links>> links =
      decode::nbest_alignments(model, translations, {pieces, pieces, std::nullopt, words}, vocab, vocab, 2);
  REQUIRE(links.size() == sources.size());
  CHECK(links[1].empty());  // an empty line
  CHECK(links[2].empty());  // not asked for
  for (size_t i : {size_t(0), size_t(3)}) {
    const decode::AlignmentExtraction& extraction = i == 0 ? pieces : words;
    REQUIRE(translations[i].nbest.size() == 3);
    REQUIRE(links[i].size() == 3);
    for (size_t k = 0; k < 3; ++k) {
      INFO("line " << i << ", hypothesis " << k);
      std::vector<align::Links> alone;
      decode::collect_attention(model, {data::Example{translations[i].source, translations[i].nbest[k].tokens, 0}},
                                decode::alignment_selection(), 1, [&](const decode::SentenceAttention& sentence) {
                                  alone.push_back(decode::alignment_links(sentence, extraction, vocab, vocab));
                                });
      CHECK(links[i][k] == alone.at(0));
    }
  }
  CHECK(decode::translation_alignments(model, translations, pieces, vocab, vocab, 2)[0] == links[0][0]);
}

TEST_CASE("cross_attention_shape: the layers and heads alignments may read", "[decode][attention_dump]") {
  const decode::CrossAttentionShape transformer = decode::cross_attention_shape(*trained_transformer());
  CHECK(transformer.layers == 2);
  CHECK(transformer.heads == std::vector<int>(2, int(testing::tiny_transformer_options().layer.heads)));
  const decode::CrossAttentionShape rnn = decode::cross_attention_shape(*trained_rnn());
  CHECK(rnn.layers == 1);
  CHECK(rnn.heads == std::vector<int>{1});
}
