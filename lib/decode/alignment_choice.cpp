#include "decode/alignment_choice.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "core/check.h"
#include "decode/alignment.h"
#include "decode/attention_dump.h"
#include "io/atomic_file.h"
#include "io/config_reader.h"

namespace attn::decode {

namespace {

eval::AlignmentLinks as_sure_links(const align::Links& links) {
  eval::AlignmentLinks set;
  set.sure.insert(links.begin(), links.end());
  return set;
}

}  // namespace

std::string alignment_choice_path(const std::string& run_dir) {
  return (std::filesystem::path(run_dir) / kAlignmentChoiceFile).string();
}

std::vector<AlignmentExtraction> extraction_candidates(const CrossAttentionShape& shape) {
  std::vector<AlignmentExtraction> candidates;
  for (int layer = 0; layer < shape.layers; ++layer) {
    std::vector<std::optional<int>> heads{std::nullopt};  // the mean first
    for (int head = 0; head < shape.heads[size_t(layer)]; ++head) heads.push_back(head);
    for (const std::optional<int>& head : heads)
      for (bool shifted : {false, true})
        for (WordLinking linking : {WordLinking::mean_attention, WordLinking::any_piece}) {
          AlignmentExtraction extraction;
          extraction.layer = layer;
          extraction.head = head;
          extraction.shifted = shifted;
          extraction.word_linking = linking;
          candidates.push_back(extraction);
        }
  }
  return candidates;
}

std::string describe(const AlignmentExtraction& extraction) {
  std::ostringstream text;
  text << "layer " << extraction.layer << ", head " << (extraction.head ? std::to_string(*extraction.head) : "mean")
       << ", shift " << (extraction.shifted ? 1 : 0) << ", words " << choice_name(extraction.word_linking);
  if (extraction.threshold > 0) text << ", threshold " << extraction.threshold;
  if (extraction.unit != AlignmentUnit::words) text << ", " << choice_name(extraction.unit);
  return text.str();
}

std::vector<RankedExtraction> rank_extractions(const models::Seq2SeqModel& model, const data::Vocab& source_vocab,
                                               const data::Vocab& target_vocab, const std::vector<std::string>& sources,
                                               const std::vector<std::string>& targets,
                                               const std::vector<eval::AlignmentLinks>& reference,
                                               const TranslateOptions& options) {
  ATTN_CHECK(sources.size() == targets.size() && sources.size() == reference.size(),
             "rank_extractions: ", sources.size(), " sources, ", targets.size(), " targets and ", reference.size(),
             " reference lines");
  const std::vector<AlignmentExtraction> candidates = extraction_candidates(cross_attention_shape(model));
  ATTN_CHECK(!candidates.empty(), "the model has no cross attention to align with");
  // The dumper hands over every line (one with an empty side has no maps, so no links).
  std::vector<eval::AlignmentCounts> counts(candidates.size());
  AttentionDumpOptions dump_options;
  dump_options.selection = alignment_selection();
  dump_options.translate = options;
  AttentionDumper(model, source_vocab, target_vocab, dump_options)
      .forced(sources, targets, [&](const SentenceAttention& sentence) {
        const size_t line = size_t(sentence.index);
        for (size_t c = 0; c < candidates.size(); ++c)
          counts[c] += eval::count_alignment(
              as_sure_links(alignment_links(sentence, candidates[c], source_vocab, target_vocab)), reference[line]);
      });

  std::vector<RankedExtraction> ranked;
  for (size_t c = 0; c < candidates.size(); ++c)
    ranked.push_back({candidates[c], eval::alignment_score_from_counts(counts[c], int64_t(sources.size()))});
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const RankedExtraction& a, const RankedExtraction& b) { return a.score.aer < b.score.aer; });
  return ranked;
}

nlohmann::json extraction_json(const AlignmentExtraction& extraction) {
  nlohmann::json object;
  object["layer"] = extraction.layer;
  object["head"] = io::detail::write_attention_head({extraction.head});
  object["shift"] = extraction.shifted ? 1 : 0;
  object["words"] = choice_name(extraction.word_linking);
  object["threshold"] = io::detail::write_float(extraction.threshold);
  return object;
}

AlignmentExtraction extraction_from_json(const nlohmann::json& object, const std::string& source) {
  ATTN_CHECK(object.is_object(), source, ": expected a JSON object");
  const auto key = [&](const char* name) { return source + ": " + name; };
  static const std::vector<std::string> known = {"layer", "head", "shift", "words", "threshold", "measured"};
  for (const auto& [name, value] : object.items()) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string expected;
    for (const std::string& k : known) expected += (expected.empty() ? "" : ", ") + k;
    throw Error(source + ": unknown key \"" + name + "\" (expected " + expected + ")");
  }
  AlignmentExtraction extraction;
  if (object.contains("layer"))
    extraction.layer = int(io::detail::read_integer(object["layer"], key("layer"), -64, 64));
  if (object.contains("head")) extraction.head = io::detail::read_attention_head(object["head"], key("head")).index;
  if (object.contains("shift")) extraction.shifted = io::detail::read_integer(object["shift"], key("shift"), 0, 1) == 1;
  if (object.contains("words"))
    extraction.word_linking = io::detail::read_choice<WordLinking>(object["words"], key("words"));
  if (object.contains("threshold")) {
    const double threshold = io::detail::read_real(object["threshold"], key("threshold"));
    ATTN_CHECK(threshold >= 0 && threshold <= 1, key("threshold"), " must be from 0 to 1, got ", threshold);
    extraction.threshold = float(threshold);
  }
  return extraction;
}

AlignmentExtraction trained_alignment_extraction(const io::Config& config) {
  AlignmentExtraction extraction;
  const io::GuidedAlignmentConfig& guided = config.train.guided_alignment;
  if (!guided.on()) return extraction;
  extraction.layer = guided.layer;
  extraction.head = guided.head.index;
  extraction.shifted = guided.shift == 1;
  return extraction;
}

AlignmentExtraction run_alignment_extraction(const std::string& run_dir, const io::Config& config) {
  const std::string path = alignment_choice_path(run_dir);
  if (!std::filesystem::exists(path)) return trained_alignment_extraction(config);
  return extraction_from_json(io::read_config_file(path), path);
}

void save_alignment_choice(const std::string& run_dir, const RankedExtraction& best, const std::string& reference_name,
                           size_t candidates) {
  nlohmann::json object = extraction_json(best.extraction);
  object["measured"] = {{"reference", reference_name},       {"candidates", candidates},
                        {"sentences", best.score.sentences}, {"aer", best.score.aer},
                        {"precision", best.score.precision}, {"recall", best.score.recall}};
  io::write_file_atomically(alignment_choice_path(run_dir), object.dump(2) + "\n");
}

}  // namespace attn::decode
