// attn-score: corpus BLEU (sacreBLEU 2.x default settings) and chrF2 of a hypothesis file
// against one reference file; bootstrap intervals and the paired bootstrap test as
// sacreBLEU's --confidence and --paired-bs; precision, recall, F1 and AER of word alignments.
//   attn-score --ref ref.txt [--hyp hyp.txt] [--json]    (hypotheses from stdin without --hyp)
//   attn-score --model runs/en-it --subset test --hyp hyp.txt   (the reference: data.test_tgt)
//   attn-score --ref ref.txt --hyp hyp.txt --confidence [--confidence-n N] [--seed S]
//   attn-score --ref ref.txt --hyp base.txt --hyp new.txt... --paired-bs [--paired-bs-n N] [--seed S]
//   attn-score --alignments gold.txt --hyp predicted.txt   (Pharaoh links; gold may mark i?j possible)
#include <iostream>

#include "app_main.h"
#include "eval/alignment_score.h"
#include "eval/score_report.h"
#include "eval/significance.h"
#include "run_defaults.h"

namespace {

struct ScoreFlags {
  std::string ref_path, model_dir, subset, alignments_path;
  std::vector<std::string> hyp_paths;
  bool as_json = false, confidence = false, paired_bs = false;
  int confidence_n = attn::eval::kDefaultResamples, paired_bs_n = attn::eval::kDefaultResamples;
  int chrf_word_order = 0;
  uint64_t seed = attn::eval::kDefaultBootstrapSeed;
};

void add_flags(CLI::App& app, ScoreFlags& flags) {
  auto* ref = app.add_option("--ref", flags.ref_path, "reference file, one sentence per line");
  auto* subset = app.add_option("--subset", flags.subset,
                                "instead of --ref: the run's dev or test reference (data.valid_tgt / data.test_tgt)")
                     ->check(CLI::IsMember({"dev", "test"}))
                     ->excludes(ref);
  auto* model =
      app.add_option("--model", flags.model_dir, "with --subset: the run directory (default: as attn-translate)")
          ->needs(subset);
  app.add_option("--hyp", flags.hyp_paths,
                 "hypothesis file (default: standard input); with --paired-bs several, the first being the baseline; "
                 "with --alignments the predicted links");
  app.add_flag("--json", flags.as_json, "print one JSON object instead of text");
  auto* word_order =
      app.add_option("--chrf-word-order", flags.chrf_word_order,
                     "word n-gram order of chrF: 0 is chrF2, 2 is chrF++ (sacreBLEU's --chrf-word-order; default 0)")
          ->check(attn::apps::in_range(0, attn::eval::kChrfMaxWordOrder));
  auto* confidence = app.add_flag("--confidence", flags.confidence,
                                  "bootstrap mean and 95% confidence interval of BLEU and chrF (one --hyp)");
  auto* confidence_n = app.add_option("--confidence-n", flags.confidence_n,
                                      "with --confidence: the number of bootstrap resamples (default 1000)")
                           ->check(attn::apps::at_least(1))
                           ->needs(confidence);
  auto* paired_bs = app.add_flag("--paired-bs", flags.paired_bs,
                                 "paired bootstrap resampling test (Koehn 2004) of each --hyp after the first against "
                                 "the first, the baseline: means, 95% intervals and p-values")
                        ->excludes(confidence);
  auto* paired_bs_n = app.add_option("--paired-bs-n", flags.paired_bs_n,
                                     "with --paired-bs: the number of bootstrap resamples (default 1000)")
                          ->check(attn::apps::at_least(1))
                          ->needs(paired_bs);
  app.add_option("--seed", flags.seed, "seed of the bootstrap resamples (default 12345, sacreBLEU's)");
  app.add_option("--alignments", flags.alignments_path,
                 "score word alignments instead: the gold links file (Pharaoh 'i-j', possible links 'i?j' or 'ipj'; "
                 "a tab-separated line is read by its last field), against --hyp")
      ->excludes(ref)
      ->excludes(subset)
      ->excludes(model)
      ->excludes(word_order)
      ->excludes(confidence)
      ->excludes(confidence_n)
      ->excludes(paired_bs)
      ->excludes(paired_bs_n);
}

// The one hypothesis file of a run without --paired-bs ("" for standard input).
std::string single_hypothesis(const ScoreFlags& flags) {
  ATTN_CHECK(flags.hyp_paths.size() <= 1,
             "--hyp: give one file; several only with --paired-bs (the first is the "
             "baseline)");
  return flags.hyp_paths.empty() ? std::string() : flags.hyp_paths[0];
}

template <class Report>
void print(const Report& report, bool as_json) {
  if (as_json)
    std::cout << report.to_json().dump() << "\n";
  else
    std::cout << report.format();
}

void score_translations(ScoreFlags& flags) {
  if (!flags.subset.empty()) {
    const std::string run_dir = attn::apps::resolve_model_dir(flags.model_dir);
    flags.ref_path = attn::apps::subset_file(attn::apps::run_config(run_dir), run_dir, flags.subset, "tgt");
  }
  ATTN_CHECK(!flags.ref_path.empty(), "give the reference: --ref FILE, or --subset dev|test of a run");
  attn::eval::BootstrapOptions options;
  options.seed = flags.seed;
  options.chrf_word_order = flags.chrf_word_order;
  if (flags.paired_bs) {
    ATTN_CHECK(flags.hyp_paths.size() >= 2,
               "--paired-bs: give the baseline and at least one system: --hyp BASELINE --hyp SYSTEM...");
    options.resamples = flags.paired_bs_n;
    print(attn::eval::paired_bootstrap_files(flags.ref_path, flags.hyp_paths, options), flags.as_json);
  } else if (flags.confidence) {
    options.resamples = flags.confidence_n;
    print(attn::eval::confidence_files(flags.ref_path, single_hypothesis(flags), options), flags.as_json);
  } else {
    print(attn::eval::score_files(flags.ref_path, single_hypothesis(flags), flags.chrf_word_order), flags.as_json);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "attn-score: corpus BLEU and chrF2, computed like sacreBLEU 2.x defaults; bootstrap confidence and "
      "significance; word alignment scores"};
  ScoreFlags flags;
  add_flags(app, flags);
  return attn::apps::run_app(app, argc, argv, [&] {
    if (!flags.alignments_path.empty())
      print(attn::eval::score_alignment_files(flags.alignments_path, single_hypothesis(flags)), flags.as_json);
    else
      score_translations(flags);
    return 0;
  });
}
