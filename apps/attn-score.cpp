// attn-score: corpus BLEU (sacreBLEU 2.x default settings) and chrF2 of a hypothesis file
// against one reference file.
//   attn-score --ref ref.txt [--hyp hyp.txt] [--json]    (hypotheses from stdin without --hyp)
//   attn-score --model runs/en-it --subset test --hyp hyp.txt   (the reference: data.test_tgt)
#include <iostream>

#include "app_main.h"
#include "eval/score_report.h"
#include "run_defaults.h"

int main(int argc, char** argv) {
  CLI::App app{"attn-score: corpus BLEU and chrF2, computed like sacreBLEU 2.x defaults"};
  std::string ref_path, hyp_path, model_dir, subset;
  bool as_json = false;
  auto* ref = app.add_option("--ref", ref_path, "reference file, one sentence per line");
  auto* subset_option =
      app.add_option("--subset", subset,
                     "instead of --ref: the run's dev or test reference (data.valid_tgt / data.test_tgt)")
          ->check(CLI::IsMember({"dev", "test"}))
          ->excludes(ref);
  app.add_option("--model", model_dir, "with --subset: the run directory (default: as attn-translate)")
      ->needs(subset_option);
  app.add_option("--hyp", hyp_path, "hypothesis file (default: standard input)");
  app.add_flag("--json", as_json, "print one JSON object instead of text");
  return attn::apps::run_app(app, argc, argv, [&] {
    if (!subset.empty()) {
      const std::string run_dir = attn::apps::resolve_model_dir(model_dir);
      ref_path = attn::apps::subset_file(attn::apps::run_config(run_dir), run_dir, subset, "tgt");
    }
    ATTN_CHECK(!ref_path.empty(), "give the reference: --ref FILE, or --subset dev|test of a run");
    const attn::eval::ScoreReport report = attn::eval::score_files(ref_path, hyp_path);
    if (as_json)
      std::cout << report.to_json().dump() << "\n";
    else
      std::cout << report.format();
    return 0;
  });
}
