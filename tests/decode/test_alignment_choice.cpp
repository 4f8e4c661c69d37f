// Choosing a run's alignment extraction by measurement (decode/alignment_choice.h): every
// candidate scored as its own links would score, best first; the choice written beside the run
// and read back; bad files named with their key.
#include <fstream>
#include <set>

#include <catch2/catch.hpp>

#include "core/check.h"
#include "data/data_fixtures.h"
#include "data/vocab.h"
#include "decode/alignment.h"
#include "decode/alignment_choice.h"
#include "decode/attention_dump.h"
#include "eval/alignment_score.h"
#include "models/tiny_models.h"
#include "temp_dir.h"

using namespace attn;

namespace {

struct TinyAligner {
  data::Vocab vocab = data::Vocab::load(testing::tiny_vocab_model("unigram"));
  std::unique_ptr<models::TransformerModel> model;

  TinyAligner() {
    models::TransformerOptions options = testing::tiny_transformer_options();
    options.source_vocab = options.target_vocab = vocab.size();
    options.decoder_layers = 2;
    model = std::make_unique<models::TransformerModel>(options, 7);
  }

  // The Pharaoh line of each pair under `extraction`, forced.
  std::vector<std::string> links(const std::vector<std::string>& sources, const std::vector<std::string>& targets,
                                 const decode::AlignmentExtraction& extraction) const {
    std::vector<std::string> lines(sources.size());
    decode::AttentionDumpOptions options;
    options.selection = decode::alignment_selection();
    options.translate.batch_size = 2;
    decode::AttentionDumper(*model, vocab, vocab, options)
        .forced(sources, targets, [&](const decode::SentenceAttention& sentence) {
          lines[size_t(sentence.index)] =
              align::pharaoh_line(decode::alignment_links(sentence, extraction, vocab, vocab));
        });
    return lines;
  }
};

const std::vector<std::string> kSources = {"kato rina meluso", "gavo ne mi pe", "", "di kato", "rina ne gavo mi"};
const std::vector<std::string> kTargets = {"rina kato", "mi ne gavo", "ta", "di di kato", "gavo rina mi ne"};

std::vector<eval::AlignmentLinks> parsed(const std::vector<std::string>& lines) {
  std::vector<eval::AlignmentLinks> links;
  for (const std::string& line : lines) links.push_back(eval::parse_alignment_line(line));
  return links;
}

}  // namespace

TEST_CASE("extraction candidates: every layer's mean and heads - shift 0 and 1 - words mean and any",
          "[decode][alignment]") {
  const std::vector<decode::AlignmentExtraction> candidates = decode::extraction_candidates({2, {3, 2}});
  CHECK(candidates.size() == (4 + 3) * 2 * 2);
  std::set<std::string> distinct;
  for (const decode::AlignmentExtraction& candidate : candidates) {
    distinct.insert(decode::describe(candidate));
    CHECK(candidate.unit == decode::AlignmentUnit::words);
    CHECK(candidate.threshold == 0.f);
    CHECK(candidate.layer >= 0);
    CHECK(candidate.head.value_or(0) < (candidate.layer == 0 ? 3 : 2));
  }
  CHECK(distinct.size() == candidates.size());
  CHECK(decode::describe(candidates.front()) == "layer 0, head mean, shift 0, words mean");
  CHECK(decode::extraction_candidates({}).empty());
}

TEST_CASE("rank_extractions scores each candidate as its own links score - best first - the reference's own at AER 0",
          "[decode][alignment]") {
  const TinyAligner aligner;
  decode::AlignmentExtraction chosen;  // a reference made by one candidate: it must come out at AER 0
  chosen.layer = 1;
  chosen.head = 1;
  chosen.shifted = true;
  chosen.word_linking = decode::WordLinking::any_piece;
  const std::vector<std::string> reference = aligner.links(kSources, kTargets, chosen);
  decode::TranslateOptions options;
  options.batch_size = 2;  // several batches, with padding
  const std::vector<decode::RankedExtraction> ranked = decode::rank_extractions(
      *aligner.model, aligner.vocab, aligner.vocab, kSources, kTargets, parsed(reference), options);

  REQUIRE(ranked.size() == decode::extraction_candidates(decode::cross_attention_shape(*aligner.model)).size());
  CHECK(ranked.front().score.aer == 0.0);
  bool found = false;
  for (size_t r = 0; r < ranked.size(); ++r) {
    const decode::RankedExtraction& entry = ranked[r];
    INFO(decode::describe(entry.extraction));
    if (r > 0) CHECK(ranked[r - 1].score.aer <= entry.score.aer);
    const eval::AlignmentScore alone =
        eval::score_alignments(reference, aligner.links(kSources, kTargets, entry.extraction), "reference", "alone");
    CHECK(entry.score.aer == alone.aer);
    CHECK(entry.score.precision == alone.precision);
    CHECK(entry.score.recall == alone.recall);
    CHECK(entry.score.sentences == int64_t(kSources.size()));
    if (decode::describe(entry.extraction) == decode::describe(chosen)) {
      found = true;
      CHECK(entry.score.aer == 0.0);
    }
  }
  CHECK(found);
  CHECK_THROWS_WITH(decode::rank_extractions(*aligner.model, aligner.vocab, aligner.vocab, kSources, kTargets,
                                             parsed({"0-0"}), options),
                    Catch::Contains("5 sources, 5 targets and 1 reference lines"));
}

TEST_CASE("a run's alignment choice: saved atomically - read back - without one the guided or built-in extraction",
          "[decode][alignment]") {
  testing::TempDir dir;
  const io::Config unguided;
  const decode::AlignmentExtraction defaults = decode::run_alignment_extraction(dir.path().string(), unguided);
  CHECK(decode::describe(defaults) == decode::describe(decode::AlignmentExtraction{}));
  io::Config guided;
  guided.train.guided_alignment.weight = 1;
  guided.train.guided_alignment.layer = 0;
  guided.train.guided_alignment.head.index = 2;
  guided.train.guided_alignment.shift = 1;
  CHECK(decode::describe(decode::run_alignment_extraction(dir.path().string(), guided)) ==
        "layer 0, head 2, shift 1, words mean");
  guided.train.guided_alignment.head.index.reset();  // guiding the heads' mean
  CHECK(decode::describe(decode::run_alignment_extraction(dir.path().string(), guided)) ==
        "layer 0, head mean, shift 1, words mean");

  decode::RankedExtraction best;
  best.extraction.layer = 0;
  best.extraction.head = 3;
  best.extraction.shifted = true;
  best.extraction.word_linking = decode::WordLinking::any_piece;
  best.extraction.threshold = 0.25f;
  best.score.aer = 0.4;
  best.score.sentences = 12;
  decode::save_alignment_choice(dir.path().string(), best, "gold.tsv", 60);
  const decode::AlignmentExtraction read = decode::run_alignment_extraction(dir.path().string(), guided);
  CHECK(read.layer == 0);
  CHECK(read.head == std::optional<int>(3));
  CHECK(read.shifted);
  CHECK(read.word_linking == decode::WordLinking::any_piece);
  CHECK(read.threshold == 0.25f);
  CHECK(read.unit == decode::AlignmentUnit::words);

  const nlohmann::json mean = decode::extraction_json(decode::AlignmentExtraction{});
  CHECK(mean["head"] == "mean");
  CHECK(decode::describe(decode::extraction_from_json(mean, "x")) == decode::describe(decode::AlignmentExtraction{}));
  CHECK(decode::extraction_from_json(nlohmann::json{{"shift", 1}}, "x").shifted);  // the rest: defaults
}

TEST_CASE("a bad alignment choice is an error naming the file and the key", "[decode][alignment]") {
  testing::TempDir dir;
  const std::string path = dir.file(decode::kAlignmentChoiceFile);
  const auto refused = [&](const std::string& text) {
    std::ofstream(path) << text;
    try {
      decode::run_alignment_extraction(dir.path().string(), io::Config{});
    } catch (const std::exception& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  CHECK_THAT(refused(R"({"layer": 0, "heads": 1})"), Catch::Contains(path) && Catch::Contains("unknown key \"heads\""));
  CHECK_THAT(refused(R"({"head": -1})"), Catch::Contains(path + ": head"));
  CHECK_THAT(refused(R"({"shift": 2})"), Catch::Contains(path + ": shift"));
  CHECK_THAT(refused(R"({"words": "all"})"), Catch::Contains(path + ": words"));
  CHECK_THAT(refused(R"({"threshold": 1.5})"), Catch::Contains(path + ": threshold"));
  CHECK_THAT(refused(R"({"layer": 0,)"), Catch::Contains(path));
  CHECK_THAT(refused("[1]"), Catch::Contains(path + ": expected a JSON object"));
}
