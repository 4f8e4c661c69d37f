#pragma once
// Which extraction of a run's cross attention aligns best, by measurement: every choice of
// decode/alignment.h scored against reference word links (attn-dump-attention
// --choose-alignment), and the winner kept beside the run as its own default (RUN/alignment.json,
// read by attn-translate, attn-dump-attention and attn-serve).
//
// Why a run needs its own: which head aligns is learned, not designed. In the main job's model
// one head of the first decoder layer, read at the shifted step, aligns far better than the
// mean of any layer (docs/experiments.md, "Extraction choices at the full budget"), and another
// run's aligning head may be another one.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "decode/alignment_extraction.h"
#include "decode/translator.h"
#include "eval/alignment_score.h"
#include "io/config.h"
#include "models/seq2seq_model.h"

namespace attn::decode {

// RUN/alignment.json: {"layer": 0, "head": 1 | "mean", "shift": 0 | 1, "words": "mean" | "any",
// "threshold": 0, "measured": {...}}. "measured" says what chose it (not read back).
inline constexpr const char* kAlignmentChoiceFile = "alignment.json";
std::string alignment_choice_path(const std::string& run_dir);

// Every extraction of word links the model offers: each layer, its mean and each head, shift 0
// and 1, words from any piece link or from the mean attention; argmax (threshold 0).
std::vector<AlignmentExtraction> extraction_candidates(const CrossAttentionShape& shape);

// "layer 0, head 1, shift 1, words mean" (threshold and unit only when not the defaults).
std::string describe(const AlignmentExtraction& extraction);

struct RankedExtraction {
  AlignmentExtraction extraction;
  eval::AlignmentScore score;
};

// Every candidate's word links of the pairs (sources[i], targets[i]), forced, scored against
// reference[i]; best (lowest AER) first, ties in candidate order. One forward per batch serves
// every candidate. A pair with an empty side predicts no link. Throws when the counts differ.
std::vector<RankedExtraction> rank_extractions(const models::Seq2SeqModel& model, const data::Vocab& source_vocab,
                                               const data::Vocab& target_vocab, const std::vector<std::string>& sources,
                                               const std::vector<std::string>& targets,
                                               const std::vector<eval::AlignmentLinks>& reference,
                                               const TranslateOptions& options);

nlohmann::json extraction_json(const AlignmentExtraction& extraction);
// The extraction of such an object; a missing key keeps the built-in default, a bad one is an
// attn::Error naming `source` (the file) and the key.
AlignmentExtraction extraction_from_json(const nlohmann::json& object, const std::string& source);

// The extraction a run was trained to align with: with train.guided_alignment on, the guided
// layer, head and shift (Marian reads its alignments from the guided layer too); otherwise the
// built-in defaults.
AlignmentExtraction trained_alignment_extraction(const io::Config& config);

// The run's chosen extraction (RUN/alignment.json), or trained_alignment_extraction of its
// config when it has none.
AlignmentExtraction run_alignment_extraction(const std::string& run_dir, const io::Config& config);

// Writes `best` as RUN/alignment.json, atomically, with what measured it.
void save_alignment_choice(const std::string& run_dir, const RankedExtraction& best, const std::string& reference_name,
                           size_t candidates);

}  // namespace attn::decode
