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
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <memory>
#include <unistd.h>

#include "alignment_flags.h"
#include "app_main.h"
#include "config_flags.h"
#include "decode/translator.h"
#include "dnnl/context.h"
#include "ensemble_flags.h"
#include "io/atomic_file.h"
#include "io/line_reader.h"
#include "run/load_run.h"
#include "run_defaults.h"

namespace {

using Clock = std::chrono::steady_clock;

// How long the input may be silent before what has arrived is translated: long enough that a
// program writing lines in a burst fills whole batches, short enough that a person or a
// request-response client gets each answer at once.
constexpr std::chrono::milliseconds kInputPause{30};
constexpr std::chrono::milliseconds kWaitForever{-1};

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

// Standard output (flushed per window, so a reader sees each window as soon as it is
// translated), or --output FILE: written to FILE.tmp and renamed over FILE only once all of it
// is written, so a failure never leaves a partial FILE nor replaces an existing one.
class Output {
 public:
  explicit Output(const std::string& path) {
    if (!path.empty()) file_ = std::make_unique<attn::io::AtomicFile>(path);
  }
  void write(const std::string& text) {
    if (file_) return file_->write(text.data(), text.size());
    std::cout << text;
    std::cout.flush();  // stop at the first window that cannot be written, not at the end
    ATTN_CHECK(std::cout.good(), "cannot write the translations to standard output");
  }
  void finish() {
    if (file_) file_->commit();
  }

 private:
  std::unique_ptr<attn::io::AtomicFile> file_;
};

// The summary at the end and, when stderr is a terminal, a progress line for long inputs.
class Report {
 public:
  explicit Report(bool quiet) : quiet_(quiet), terminal_(!quiet && isatty(STDERR_FILENO)) {}
  void add(const std::vector<attn::decode::Translation>& translations) {
    lines_ += int64_t(translations.size());
    for (const auto& translation : translations)
      if (!translation.nbest.empty()) tokens_ += int64_t(translation.nbest.front().tokens.size());
    if (terminal_ && Clock::now() - last_progress_ >= std::chrono::seconds(1)) {
      last_progress_ = Clock::now();
      std::fprintf(stderr, "\r%lld lines translated, %.1f sentences/s", static_cast<long long>(lines_),
                   lines_ / seconds());
      std::fflush(stderr);
      progress_shown_ = true;
    }
  }
  void summary() const {
    if (progress_shown_) std::fputc('\n', stderr);
    if (quiet_) return;
    const double s = seconds();
    spdlog::info("translated {} lines ({} target tokens) in {:.2f} s: {:.1f} sentences/s", lines_, tokens_, s,
                 s > 0 ? lines_ / s : 0.0);
  }

 private:
  double seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  bool quiet_, terminal_;
  bool progress_shown_ = false;
  int64_t lines_ = 0, tokens_ = 0;
  Clock::time_point start_ = Clock::now(), last_progress_ = Clock::now();
};

// The input: standard input, --input FILE, or --subset's file from the run's config.
class Input {
 public:
  explicit Input(const std::string& path) : fd_(STDIN_FILENO), name_("standard input") {
    if (path.empty()) return;
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ATTN_CHECK(fd_ >= 0, "cannot open '", path, "': ", std::strerror(errno));
    name_ = "'" + path + "'";
  }
  ~Input() {
    if (fd_ != STDIN_FILENO) ::close(fd_);
  }
  Input(const Input&) = delete;
  Input& operator=(const Input&) = delete;
  int fd() const { return fd_; }
  const std::string& name() const { return name_; }

 private:
  int fd_;
  std::string name_;
};

int translate(Flags& flags) {
  // Several --model: an ensemble, whose first run gives the vocabulary, settings and --subset.
  const std::vector<std::string> model_dirs = flags.ensemble.resolved_model_dirs();
  const std::string& model_dir = model_dirs.front();
  std::string input_path = flags.input;
  if (!flags.subset.empty())
    input_path = attn::apps::subset_file(attn::apps::run_config(model_dir), model_dir, flags.subset, "src");
  // Both files before the model loads: a wrong path fails at once.
  Input input(input_path);
  Output output(flags.output);

  const attn::run::LoadedEnsemble models = attn::run::load_ensemble(
      model_dirs, flags.ensemble.checkpoints, flags.ensemble.weights, attn::apps::precision_flag(flags.precision));
  const attn::run::LoadedRun& run = models.first();
  attn::dnn::set_num_threads(flags.threads > 0 ? flags.threads : run.config.train.threads);
  const attn::decode::TranslateOptions options = translate_options(models, flags);
  attn::decode::Translator translator(models.model(), run.vocab->source, run.vocab->target, options);
  const bool alignments = flags.alignments.enabled();
  ATTN_CHECK(!alignments || options.search.nbest <= 1,
             "--alignments gives the best translation's links: it does not combine with --nbest ",
             options.search.nbest);
  ATTN_CHECK(!alignments || models.runs.size() == 1,
             "--alignments reads one model's attention: it does not combine with an ensemble of ", models.runs.size(),
             " models");
  const attn::decode::AlignmentExtraction extraction =
      alignments ? attn::apps::alignment_extraction(flags.alignments, model_dir, run.config)
                 : attn::decode::AlignmentExtraction{};
  std::optional<attn::apps::ReverseAligner> reverse;
  if (flags.alignments.symmetrized())
    reverse.emplace(flags.alignments, attn::apps::precision_flag(flags.precision), options.batch_size);
  std::vector<std::string> window_sources;  // with --reverse-model: the window's lines, which it reads as targets

  Report report(flags.quiet);
  attn::io::LineReader reader(input.fd(), input.name());
  attn::decode::TranslationWindow window(translator);
  int64_t next_index = 0;  // 0-based input line of the window's first line (n-best index)
  auto flush_window = [&] {
    const std::vector<attn::decode::Translation> translations = window.translate();
    std::vector<attn::align::Links> links;
    if (alignments)
      links = attn::decode::translation_alignments(models.model(), translations, extraction, run.vocab->source,
                                                   run.vocab->target, options.batch_size);
    if (reverse) {
      std::vector<std::string> outputs;
      for (const auto& translation : translations) outputs.push_back(translation.text);
      links = reverse->symmetrized(links, window_sources, outputs);
      window_sources.clear();
    }
    std::string text;
    for (size_t i = 0; i < translations.size(); ++i)
      format_translation(text, next_index++, translations[i], translator, options.search.nbest,
                         alignments ? &links[i] : nullptr);
    output.write(text);
    report.add(translations);
  };
  std::string line;
  while (true) {
    // With nothing pending, wait for input as long as it takes; otherwise only for a pause.
    const auto status = reader.next(line, window.empty() ? kWaitForever : kInputPause);
    if (status == attn::io::LineReader::Status::line) {
      if (reverse) window_sources.push_back(line);
      if (window.add(std::move(line))) flush_window();
    } else {
      if (!window.empty()) flush_window();
      if (status == attn::io::LineReader::Status::end) break;
    }
  }
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
  add_config_flag(app, "--nbest", "decode.nbest", flags.config,
                  "print N hypotheses per line as 'index ||| text ||| score'");
  add_config_flag(app, "--length-penalty", "decode.length_penalty", flags.config);
  add_config_flag(app, "--min-length", "decode.min_length", flags.config);
  add_config_flag(app, "--no-repeat-ngram", "decode.no_repeat_ngram", flags.config);
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
  app.add_option("--threads", flags.threads, "OpenMP threads (default: train.threads)")->check(at_least(1));
  app.add_flag("--quiet", flags.quiet, "no summary (lines, tokens, seconds, sentences/s) on stderr at the end");
  return attn::apps::run_app(app, argc, argv, [&] { return translate(flags); });
}
