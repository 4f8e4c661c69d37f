#pragma once
// --alignments and the extraction flags of attn-dump-attention and attn-translate: word (or
// piece) links read from the cross attention (decode/alignment.h).
#include <string>

#include <CLI/CLI.hpp>

#include "app_main.h"
#include "decode/alignment.h"

namespace attn::apps {

struct AlignmentFlags {
  std::string unit;  // --alignments' value: "", "words" or "pieces"
  std::string head;  // "mean" or a head index
  int shift = 0;
  CLI::Option* option = nullptr;  // --alignments
  decode::AlignmentExtraction extraction;

  bool enabled() const { return option && option->count() > 0; }
};

// The defaults were chosen by AER on XL-WA en-it dev (docs/experiments.md, "Word alignments").
inline CLI::Option* add_alignment_options(CLI::App& app, AlignmentFlags& flags) {
  const decode::AlignmentExtraction defaults;
  flags.head = defaults.head ? std::to_string(*defaults.head) : "mean";
  flags.shift = defaults.shifted ? 1 : 0;
  flags.option = app.add_option("--alignments", flags.unit,
                                "word alignments from the cross attention, Pharaoh 'i-j' links between the "
                                "whitespace-separated words of source and output (or 'pieces': SentencePiece pieces)")
                     ->expected(0, 1)
                     ->check(CLI::IsMember({"", "words", "pieces"}));
  app.add_option("--alignment-layer", flags.extraction.layer,
                 "cross-attention layer to read, from 0; negative counts from the last (default: " +
                     std::to_string(defaults.layer) + ")")
      ->needs(flags.option);
  app.add_option("--alignment-head", flags.head,
                 "one head's attention, or 'mean' of the heads (default: " + flags.head + ")")
      ->needs(flags.option);
  app.add_option("--alignment-shift", flags.shift,
                 "0: a target token reads the step that predicts it; 1: the next step, whose input it is "
                 "(default: " +
                     std::to_string(flags.shift) + ")")
      ->check(CLI::IsMember({0, 1}))
      ->needs(flags.option);
  app.add_option("--alignment-threshold", flags.extraction.threshold,
                 "0: each target token links to its argmax source token; T > 0: to every source token of weight "
                 ">= T (default: 0)")
      ->check(in_range(0, 1))
      ->needs(flags.option);
  add_choice_option(app, "--alignment-words", flags.extraction.word_linking,
                    "word links from piece links ('any': words link when any of their pieces do) or from the "
                    "attention summed over source pieces, averaged over target pieces ('mean') (default: " +
                        std::string(choice_name(defaults.word_linking)) + ")")
      ->needs(flags.option);
  return flags.option;
}

// The extraction the flags ask for (after parsing).
inline decode::AlignmentExtraction alignment_extraction(AlignmentFlags& flags) {
  decode::AlignmentExtraction extraction = flags.extraction;
  extraction.unit = flags.unit == "pieces" ? decode::AlignmentUnit::pieces : decode::AlignmentUnit::words;
  extraction.shifted = flags.shift == 1;
  if (flags.head == "mean") {
    extraction.head.reset();
  } else {
    char* end = nullptr;
    const long head = std::strtol(flags.head.c_str(), &end, 10);
    ATTN_CHECK(!flags.head.empty() && *end == '\0' && head >= 0, "--alignment-head ", flags.head,
               ": expected a head index from 0 or 'mean'");
    extraction.head = int(head);
  }
  return extraction;
}

}  // namespace attn::apps
