// attn-score: corpus BLEU (sacreBLEU 2.x default settings) and chrF2 of a hypothesis file
// against one reference file.
//   attn-score --ref ref.txt [--hyp hyp.txt] [--json]    (hypotheses from stdin without --hyp)
#include <iostream>

#include "app_main.h"
#include "eval/score_report.h"

int main(int argc, char** argv) {
  CLI::App app{"attn-score: corpus BLEU and chrF2, computed like sacreBLEU 2.x defaults"};
  std::string ref_path, hyp_path;
  bool as_json = false;
  app.add_option("--ref", ref_path, "reference file, one sentence per line")->required();
  app.add_option("--hyp", hyp_path, "hypothesis file (default: standard input)");
  app.add_flag("--json", as_json, "print one JSON object instead of text");
  CLI11_PARSE(app, argc, argv);

  return attn::apps::run_app([&] {
    const attn::eval::ScoreReport report = attn::eval::score_files(ref_path, hyp_path);
    if (as_json)
      std::cout << report.to_json().dump() << "\n";
    else
      std::cout << report.format();
    return 0;
  });
}
