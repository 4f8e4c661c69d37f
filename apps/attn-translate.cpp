// attn-translate: raw text in, translations out, one output line per input line.
//   attn-translate --model runs/en-it [--beam 5] [--batch-size 32] [--nbest N] < input.txt > output.txt
#include <cstdlib>
#include <iostream>

#include "app_main.h"
#include "data/corpus.h"
#include "decode/translator.h"
#include "dnnl/context.h"
#include "io/config.h"
#include "models/model_factory.h"
#include "train/run_directory.h"

namespace {

// --model, else $ATTN_MODEL, else the output_dir of the default config.
std::string resolve_model_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("ATTN_MODEL"); env && *env) return env;
  return attn::io::load_config("configs/en-it.json").output_dir;
}

void print_translation(size_t index, const attn::decode::Translation& translation,
                       const attn::decode::Translator& translator, int nbest) {
  if (nbest <= 1) {
    std::cout << translation.text << '\n';
    return;
  }
  // Marian's n-best lists give every input line N lines, empty ones included. An empty input
  // line is not translated here, so it gets N empty hypotheses with log-probability 0.
  if (translation.nbest.empty()) {
    for (int i = 0; i < nbest; ++i) std::cout << index << " |||  ||| 0\n";
    return;
  }
  for (const auto& hypothesis : translation.nbest)
    std::cout << index << " ||| " << translator.detokenize(hypothesis) << " ||| " << hypothesis.score << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attn-translate: translate stdin line by line with a trained attn model"};
  std::string model_dir;
  int beam = 0, batch_size = 0, nbest = 0, threads = 0;
  float length_penalty = -1.f;
  app.add_option("--model", model_dir, "run directory (default: $ATTN_MODEL, else configs/en-it.json's output_dir)");
  app.add_option("--beam", beam, "beam size; 1 = greedy (default: the run's decode.beam)");
  app.add_option("--batch-size", batch_size, "sentences per batch (default: decode.batch_size)");
  app.add_option("--nbest", nbest, "print N hypotheses per line as 'index ||| text ||| score'");
  app.add_option("--length-penalty", length_penalty, "GNMT alpha (default: decode.length_penalty)");
  app.add_option("--threads", threads, "OpenMP threads (default: train.threads)");
  CLI11_PARSE(app, argc, argv);
  return attn::apps::run_app([&] {
    attn::train::LoadedRun run = attn::train::load_run(resolve_model_dir(model_dir));
    const attn::io::DecodeConfig& d = run.config.decode;
    attn::dnn::set_num_threads(threads > 0 ? threads : run.config.train.threads);
    attn::decode::TranslateOptions options;
    options.search.beam = beam > 0 ? beam : d.beam;
    options.search.nbest = nbest > 0 ? nbest : 1;
    options.search.length_penalty = length_penalty >= 0 ? length_penalty : float(d.length_penalty);
    options.search.max_len_ratio = float(d.max_len_ratio);
    options.search.max_len_extra = d.max_len_extra;
    options.batch_size = batch_size > 0 ? batch_size : d.batch_size;
    options.max_source_tokens = options.search.max_output_tokens = attn::models::max_sequence_length(run.config);
    ATTN_CHECK(options.search.nbest <= options.search.beam, "--nbest ", options.search.nbest,
               " needs --beam of at least that");

    std::vector<std::string> lines = attn::data::read_lines(std::cin, "standard input");
    attn::decode::Translator translator(*run.model, run.vocab->source, run.vocab->target, options);
    std::vector<attn::decode::Translation> translations = translator.translate(lines);
    for (size_t i = 0; i < translations.size(); ++i)
      print_translation(i, translations[i], translator, options.search.nbest);
    // A full disk or a closed pipe must not pass for a complete translation.
    std::cout.flush();
    ATTN_CHECK(std::cout.good(), "cannot write the translations to standard output");
    return 0;
  });
}
