#pragma once
// --alignments and the extraction flags of attn-dump-attention and attn-translate: word (or
// piece) links read from the cross attention (decode/alignment.h).
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "align/symmetrize.h"
#include "app_main.h"
#include "decode/alignment.h"
#include "decode/alignment_choice.h"
#include "run/load_run.h"

namespace attn::apps {

struct AlignmentFlags {
  std::string unit;  // --alignments' value: "", "words" or "pieces"
  std::string head;  // "mean" or a head index
  int shift = 0;
  CLI::Option* option = nullptr;           // --alignments
  decode::AlignmentExtraction extraction;  // the values of the flags given
  // The extraction flags (layer, head, shift, threshold, words): those given override the
  // run's own extraction (decode/alignment_choice.h), field by field.
  CLI::Option *layer_option = nullptr, *head_option = nullptr, *shift_option = nullptr, *threshold_option = nullptr,
              *words_option = nullptr;
  std::string reverse_model;       // --reverse-model: a target -> source run, "" = none
  std::string reverse_checkpoint;  // --reverse-checkpoint: its parameters, "" = the run's default
  align::Symmetrization symmetrization = align::Symmetrization::grow_diag_final_and;

  bool enabled() const { return option && option->count() > 0; }
  bool symmetrized() const { return enabled() && !reverse_model.empty(); }
};

// A flag's default is the run's RUN/alignment.json (attn-dump-attention --choose-alignment), else
// a guided run's guided layer, head and shift, else the built-in one, chosen by AER on XL-WA
// en-it dev (docs/experiments.md, "Word alignments").
inline CLI::Option* add_alignment_options(CLI::App& app, AlignmentFlags& flags) {
  const decode::AlignmentExtraction defaults;
  flags.head = defaults.head ? std::to_string(*defaults.head) : "mean";
  flags.shift = defaults.shifted ? 1 : 0;
  flags.option = app.add_option("--alignments", flags.unit,
                                "word alignments from the cross attention, Pharaoh 'i-j' links between the "
                                "whitespace-separated words of source and output (or 'pieces': SentencePiece pieces)")
                     ->expected(0, 1)
                     ->check(CLI::IsMember({"", "words", "pieces"}));
  const std::string own = "the run's alignment.json, else a guided run's guided head, else ";
  flags.layer_option =
      app.add_option("--alignment-layer", flags.extraction.layer,
                     "cross-attention layer to read, from 0; negative counts from the last (default: " + own +
                         std::to_string(defaults.layer) + ")")
          ->needs(flags.option);
  flags.head_option = app.add_option("--alignment-head", flags.head,
                                     "one head's attention, or 'mean' of the heads (default: " + own + flags.head + ")")
                          ->needs(flags.option);
  flags.shift_option = app.add_option("--alignment-shift", flags.shift,
                                      "0: a target token reads the step that predicts it; 1: the next step, whose "
                                      "input it is (default: " +
                                          own + std::to_string(flags.shift) + ")")
                           ->check(CLI::IsMember({0, 1}))
                           ->needs(flags.option);
  flags.threshold_option =
      app.add_option("--alignment-threshold", flags.extraction.threshold,
                     "0: each target token links to its argmax source token; T > 0: to every source "
                     "token of weight >= T (default: " +
                         own + "0)")
          ->check(in_range(0, 1))
          ->needs(flags.option);
  auto* reverse = app.add_option("--reverse-model", flags.reverse_model,
                                 "a run of the reverse direction (target -> source language): its attention's word "
                                 "links are symmetrised with this model's")
                      ->needs(flags.option);
  app.add_option("--reverse-checkpoint", flags.reverse_checkpoint,
                 "the reverse run's checkpoint file, e.g. its attn-average (default: its checkpoint.best, else "
                 "checkpoint.last)")
      ->needs(reverse);
  add_choice_option(app, "--symmetrize", flags.symmetrization,
                    "with --reverse-model: intersection, union or grow-diag-final-and (default: " +
                        std::string(choice_name(flags.symmetrization)) + ")")
      ->needs(reverse);
  flags.words_option =
      add_choice_option(app, "--alignment-words", flags.extraction.word_linking,
                        "word links from piece links ('any': words link when any of their pieces do) or "
                        "from the attention summed over source pieces, averaged over target pieces "
                        "('mean') (default: " +
                            own + std::string(choice_name(defaults.word_linking)) + ")")
          ->needs(flags.option);
  return flags.option;
}

inline bool given(const CLI::Option* option) { return option && option->count() > 0; }

// The extraction the flags ask for (after parsing): the run's own (decode::run_alignment_extraction
// of `run_dir` and its `config`) with each flag given in its place.
inline decode::AlignmentExtraction alignment_extraction(const AlignmentFlags& flags, const std::string& run_dir,
                                                        const io::Config& config) {
  decode::AlignmentExtraction extraction = decode::run_alignment_extraction(run_dir, config);
  extraction.unit = flags.unit == "pieces" ? decode::AlignmentUnit::pieces : decode::AlignmentUnit::words;
  if (given(flags.layer_option)) extraction.layer = flags.extraction.layer;
  if (given(flags.shift_option)) extraction.shifted = flags.shift == 1;
  if (given(flags.threshold_option)) extraction.threshold = flags.extraction.threshold;
  if (given(flags.words_option)) extraction.word_linking = flags.extraction.word_linking;
  if (given(flags.head_option)) {
    if (flags.head == "mean") {
      extraction.head.reset();
    } else {
      char* end = nullptr;
      const long head = std::strtol(flags.head.c_str(), &end, 10);
      ATTN_CHECK(!flags.head.empty() && *end == '\0' && head >= 0, "--alignment-head ", flags.head,
                 ": expected a head index from 0 or 'mean'");
      extraction.head = int(head);
    }
  }
  ATTN_CHECK(flags.reverse_model.empty() || extraction.unit == decode::AlignmentUnit::words,
             "--reverse-model symmetrises word links: it does not combine with --alignments pieces (the two models' "
             "pieces differ)");
  return extraction;
}

// --reverse-model: the reverse run, loaded once, and the symmetrisation of each line's links.
class ReverseAligner {
 public:
  ReverseAligner(const AlignmentFlags& flags, std::optional<Precision> precision, int batch_size)
      : run_(load_reverse_run(flags.reverse_model, flags.reverse_checkpoint, precision)),
        options_(decode::translate_options(run_.config)),
        extraction_(alignment_extraction(flags, flags.reverse_model, run_.config)),
        how_(flags.symmetrization) {
    if (batch_size > 0) options_.batch_size = batch_size;
  }

  // forward[i] (links of sources[i] -> targets[i]) symmetrised with the reverse run's links, read
  // by the reverse run's own extraction with the flags given in its place.
  std::vector<align::Links> symmetrized(const std::vector<align::Links>& forward,
                                        const std::vector<std::string>& sources,
                                        const std::vector<std::string>& targets) const {
    const std::vector<align::Links> reverse = decode::reverse_word_links(
        *run_.model, run_.vocab->source, run_.vocab->target, sources, targets, extraction_, options_);
    std::vector<align::Links> links(forward.size());
    for (size_t i = 0; i < forward.size(); ++i) links[i] = align::symmetrize(forward[i], reverse[i], how_);
    return links;
  }

 private:
  // The run, or an error that names the flag (the run's own message names only the path).
  static run::LoadedRun load_reverse_run(const std::string& dir, const std::string& checkpoint,
                                         std::optional<Precision> precision) {
    ATTN_CHECK(checkpoint.empty() || std::filesystem::is_regular_file(checkpoint), "--reverse-checkpoint ", checkpoint,
               " does not exist");
    try {
      return run::load_run(dir, checkpoint, precision);
    } catch (const std::exception& error) {
      throw std::runtime_error(std::string("--reverse-model: ") + error.what());
    }
  }

  run::LoadedRun run_;
  decode::TranslateOptions options_;
  decode::AlignmentExtraction extraction_;
  align::Symmetrization how_;
};

}  // namespace attn::apps
