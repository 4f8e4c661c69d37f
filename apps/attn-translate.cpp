// attn-translate: raw text in, translations out, one output line per input line.
//   attn-translate --model runs/en-it [--beam 5] [--batch-size 32] [--batch-tokens 2048] [--nbest N]
//       < input.txt > output.txt
//   attn-translate --model runs/en-it --subset test --output test.hyp    (the config's data.test_src)
//   attn-translate --model runs/en-it --sample --top-k 10 --seed 7 < mono.txt   (back-translation)
//   attn-translate --model runs/en-it --min-length 3 --no-repeat-ngram 3 < input.txt   (decode/logits_processor.h)
//   attn-translate --model runs/a --model runs/b [--checkpoint A.st --checkpoint B.st] [--weights 2 1] < in.txt
//                                                  (an ensemble: models/ensemble.h)
//   attn-translate --model runs/en-it --alignments < input.txt     ("translation ||| 0-0 1-2 ...", Marian style)
//   attn-translate --model runs/en-it --alignments --reverse-model runs/it-en < input.txt   (both directions,
//   symmetrised)
//
// It streams, as Marian and fairseq-interactive do: lines are translated a window of batches
// at a time, as soon as the window is full or the input pauses, and each window's output is
// written (in input order) before more input is read.
#include <optional>

#include "alignment_flags.h"
#include "app_main.h"
#include "config_flags.h"
#include "core/parallel.h"
#include "decode/translator.h"
#include "ensemble_flags.h"
#include "run/load_run.h"
#include "run_defaults.h"
#include "text_io.h"

namespace {

struct Flags {
  attn::apps::EnsembleFlags ensemble;  // --model, --checkpoint, --weights
  std::string input, output, subset, precision;
  attn::apps::ConfigFlags config;  // --beam, --nbest, --batch-size ...: decode.* of the runs' configs
  int threads = 0;
  bool quiet = false;
  attn::decode::SamplingOptions sampling;
  attn::apps::AlignmentFlags alignments;
};

attn::decode::TranslateOptions translate_options(const attn::run::LoadedEnsemble& models, const Flags& flags) {
  std::vector<attn::io::Config> configs;
  for (const attn::run::LoadedRun& run : models.runs) configs.push_back(flags.config.applied(run.config));
  std::vector<const attn::io::Config*> members;
  for (const attn::io::Config& config : configs) members.push_back(&config);
  attn::decode::TranslateOptions options = attn::decode::translate_options(members);
  options.search.sampling = flags.sampling;
  return options;
}

// One input line's output: its translation, or with --nbest N lines "index ||| text ||| score".
// With --alignments, "text ||| links" (Marian's format): `links` is the best hypothesis' Pharaoh line.
void format_translation(std::string& out, int64_t index, const attn::decode::Translation& translation,
                        const attn::decode::Translator& translator, int nbest, const attn::align::Links* links) {
  if (nbest <= 1) {
    out += translation.text;
    if (links) out += " ||| " + attn::align::pharaoh_line(*links);
    out += '\n';
    return;
  }
  // Marian's n-best lists give every input line N lines, empty ones included. An empty input
  // line is not translated here, so it gets N empty hypotheses with log-probability 0.
  if (translation.nbest.empty()) {
    for (int i = 0; i < nbest; ++i) out += std::to_string(index) + " |||  ||| 0\n";
    return;
  }
  // The score as std::ostream prints a float (%g): scripts parse this form.
  for (const auto& hypothesis : translation.nbest)
    out += std::to_string(index) + " ||| " + translator.detokenize(hypothesis) + " ||| " +
           fmt::format("{:g}", hypothesis.score) + '\n';
}

// What each window's translations become on the output: format_translation's lines, with
// --alignments' links read from the model's cross attention (and with --reverse-model symmetrised
// with the reverse run's).
class WindowFormat {
 public:
  WindowFormat(const Flags& flags, const attn::run::LoadedEnsemble& models, const attn::decode::Translator& translator,
               const attn::decode::TranslateOptions& options, const std::string& model_dir)
      : models_(models), translator_(translator), options_(options), alignments_(flags.alignments.enabled()) {
    ATTN_CHECK(!alignments_ || options.search.nbest <= 1,
               "--alignments gives the best translation's links: it does not combine with --nbest ",
               options.search.nbest);
    ATTN_CHECK(!alignments_ || models.runs.size() == 1,
               "--alignments reads one model's attention: it does not combine with an ensemble of ", models.runs.size(),
               " models");
    if (alignments_) extraction_ = attn::apps::alignment_extraction(flags.alignments, model_dir, models.first().config);
    if (flags.alignments.symmetrized())
      reverse_.emplace(flags.alignments, attn::apps::precision_flag(flags.precision), options.batch_size);
  }

  // `sources`: the window's lines, which --reverse-model reads as targets.
  std::string text(const std::vector<std::string>& sources,
                   const std::vector<attn::decode::Translation>& translations) {
    std::vector<attn::align::Links> links;
    const attn::run::LoadedRun& run = models_.first();
    if (alignments_)
      links = attn::decode::translation_alignments(models_.model(), translations, extraction_, run.vocab->source,
                                                   run.vocab->target, options_.batch_size);
    if (reverse_) {
      std::vector<std::string> outputs;
      for (const auto& translation : translations) outputs.push_back(translation.text);
      links = reverse_->symmetrized(links, sources, outputs);
    }
    std::string out;
    for (size_t i = 0; i < translations.size(); ++i)
      format_translation(out, next_index_++, translations[i], translator_, options_.search.nbest,
                         alignments_ ? &links[i] : nullptr);
    return out;
  }

 private:
  const attn::run::LoadedEnsemble& models_;
  const attn::decode::Translator& translator_;
  const attn::decode::TranslateOptions& options_;
  const bool alignments_;
  attn::decode::AlignmentExtraction extraction_;
  std::optional<attn::apps::ReverseAligner> reverse_;
  int64_t next_index_ = 0;  // 0-based input line of the window's first line (n-best index)
};

int translate(Flags& flags) {
  // Several --model: an ensemble, whose first run gives the vocabulary, settings and --subset.
  const std::vector<std::string> model_dirs = flags.ensemble.resolved_model_dirs();
  const std::string& model_dir = model_dirs.front();
  std::string input_path = flags.input;
  if (!flags.subset.empty())
    input_path = attn::apps::subset_file(attn::apps::run_config(model_dir), model_dir, flags.subset, "src");
  // Both files before the model loads: a wrong path fails at once.
  attn::apps::TextInput input(input_path);
  attn::apps::TextOutput output(flags.output, "the translations");

  const attn::run::LoadedEnsemble models = attn::run::load_ensemble(
      model_dirs, flags.ensemble.checkpoints, flags.ensemble.weights, attn::apps::precision_flag(flags.precision));
  attn::set_parallel_threads(flags.threads > 0 ? flags.threads : models.first().config.train.threads);
  const attn::decode::TranslateOptions options = translate_options(models, flags);
  const attn::run::Vocabularies& vocab = *models.first().vocab;
  attn::decode::Translator translator(models.model(), vocab.source, vocab.target, options);
  WindowFormat format(flags, models, translator, options, model_dir);

  attn::apps::TranslationReport report(flags.quiet);
  attn::decode::TranslationWindow window(translator);
  attn::apps::translate_windows(input, window, [&](const auto& lines, const auto& translations) {
    output.write(format.text(lines, translations));
    report.add(translations);
  });
  output.finish();
  report.summary();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attn-translate: translate text line by line with a trained attn model"};
  using attn::apps::at_least;
  Flags flags;
  attn::apps::add_ensemble_flags(app, flags.ensemble);
  auto* input = app.add_option("--input", flags.input, "read this file (default: standard input)");
  app.add_option("--subset", flags.subset, "translate the run's dev or test set (data.valid_src / data.test_src)")
      ->check(CLI::IsMember({"dev", "test"}))
      ->excludes(input);
  app.add_option(
      "--output", flags.output,
      "write this file, complete or not at all: it appears when all is translated (default: standard output)");
  using attn::apps::add_config_flag;
  add_config_flag(app, "--beam", "decode.beam", flags.config);
  add_config_flag(app, "--batch-size", "decode.batch_size", flags.config);
  add_config_flag(app, "--batch-tokens", "decode.batch_tokens", flags.config);
  add_config_flag(app, "--parallel-batches", "decode.parallel_batches", flags.config);
  add_config_flag(app, "--nbest", "decode.nbest", flags.config,
                  "print N hypotheses per line as 'index ||| text ||| score'");
  add_config_flag(app, "--length-penalty", "decode.length_penalty", flags.config);
  add_config_flag(app, "--min-length", "decode.min_length", flags.config);
  add_config_flag(app, "--no-repeat-ngram", "decode.no_repeat_ngram", flags.config);
  add_config_flag(app, "--repetition-penalty", "decode.repetition_penalty", flags.config);
  add_config_flag(app, "--prefix", "decode.prefix", flags.config);
  auto* sample = app.add_flag("--sample", flags.sampling.enabled,
                              "sample each token instead of searching (back-translation, data augmentation)");
  sample->excludes("--beam")->excludes("--nbest")->excludes("--length-penalty");
  app.add_option("--temperature", flags.sampling.temperature, "with --sample: divide the log-probabilities by T")
      ->check(attn::apps::number_check([](double value) { return value > 0; }, "above 0", ">0"))
      ->needs(sample);
  app.add_option("--top-k", flags.sampling.top_k, "with --sample: draw from the K most likely tokens only")
      ->check(at_least(1))
      ->needs(sample);
  app.add_option("--top-p", flags.sampling.top_p,
                 "with --sample: draw from the fewest most likely tokens whose probability reaches P")
      ->check(attn::apps::in_range(0, 1, true))
      ->needs(sample);
  app.add_option("--seed", flags.sampling.seed, "with --sample: the same seed gives the same samples (default 0)")
      ->needs(sample);
  attn::apps::add_alignment_options(app, flags.alignments)->excludes("--nbest");
  attn::apps::add_precision_option(app, flags.precision);
  app.add_option("--threads", flags.threads, "threads (default: train.threads)")->check(at_least(1));
  app.add_flag("--quiet", flags.quiet, "no summary (lines, tokens, seconds, sentences/s) on stderr at the end");
  return attn::apps::run_app(app, argc, argv, [&] { return translate(flags); });
}
