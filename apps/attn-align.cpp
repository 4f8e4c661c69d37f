// attn-align: word alignments of parallel text by a diagonal IBM Model 2 (fast_align's model,
// Dyer et al. 2013) trained by EM on that text, in both directions, symmetrised.
//   attn-align --src text.en --tgt text.it [--out links.txt]
//   attn-align --src test.en --tgt test.it --train-src big.en --train-tgt big.it   (align test inside a bigger corpus)
//   attn-align --src a.en --tgt a.it --reverse            (one direction: each English word from the Italian)
#include <cmath>
#include <memory>
#include <omp.h>

#include "align/symmetrize.h"
#include "align/word_aligner.h"
#include "app_main.h"
#include "core/check.h"
#include "io/atomic_file.h"

namespace {

const char* const kFooter = R"(Input: two files aligned line by line, already tokenised: words are what spaces and tabs
separate (no other tokenisation; --lowercase lowers A-Z and the Latin-1 capitals). The text to
align is trained on too; --train-src/--train-tgt add more text to train on (not written out).
The corpora stream: memory holds the vocabularies and the model's tables, never the text.
Output: one line per line pair of Pharaoh "i-j" links (source word i, target word j, from 0).
Directions: forward generates each target word from a source word (or none), reverse each
source word from a target word; by default both, symmetrised by --symmetrize.
Results are the same on any --threads (sums are added in line order).
)";

struct Flags {
  std::string src, tgt, out, forward_out, reverse_out;
  std::vector<std::string> train_src, train_tgt;
  attn::align::AlignerOptions aligner;
  attn::align::Symmetrization symmetrization = attn::align::Symmetrization::grow_diag_final_and;
  bool forward_only = false, reverse_only = false, fixed_tension = false, quiet = false;
  int threads = 0;
};

// A file written whole or not at all (io/atomic_file.h); none for an empty path.
class LinkFile {
 public:
  explicit LinkFile(const std::string& path) {
    if (!path.empty()) file_ = std::make_unique<attn::io::AtomicFile>(path);
  }
  void write(const std::string& text) {
    if (file_) return file_->write(text.data(), text.size());
    std::cout << text;
    ATTN_CHECK(std::cout.good(), "cannot write the alignments to standard output");
  }
  void commit() {
    if (file_) file_->commit();
  }

 private:
  std::unique_ptr<attn::io::AtomicFile> file_;
};

const char* direction_name(attn::align::Direction direction) {
  return direction == attn::align::Direction::forward ? "forward" : "reverse";
}

int align(Flags flags) {
  using namespace attn::align;
  ATTN_CHECK(flags.train_src.size() == flags.train_tgt.size(), "--train-src is given ", flags.train_src.size(),
             " times but --train-tgt ", flags.train_tgt.size(), ": give them in pairs");
  if (flags.threads > 0) omp_set_num_threads(flags.threads);
  std::vector<TextPair> corpora{{flags.src, flags.tgt}};
  for (size_t i = 0; i < flags.train_src.size(); ++i) corpora.push_back({flags.train_src[i], flags.train_tgt[i]});
  flags.aligner.forward = !flags.reverse_only;
  flags.aligner.reverse = !flags.forward_only;
  flags.aligner.model.optimize_tension = !flags.fixed_tension;
  ATTN_CHECK(flags.forward_out.empty() || flags.aligner.forward, "--forward-out needs the forward direction");
  ATTN_CHECK(flags.reverse_out.empty() || flags.aligner.reverse, "--reverse-out needs the reverse direction");
  // Every output is opened before the work, so a wrong path fails at once.
  LinkFile out(flags.out), forward_out(flags.forward_out), reverse_out(flags.reverse_out);

  WordAligner aligner(corpora, flags.aligner);
  if (!flags.quiet)
    spdlog::info("vocabularies: {} source words, {} target words", aligner.source_words(), aligner.target_words());
  aligner.train([&](int iteration, Direction direction, const IterationStats& stats) {
    if (flags.quiet) return;
    const double per_word = stats.words > 0 ? stats.log_likelihood / double(stats.words) : 0.0;
    spdlog::info("iteration {} {}: log-likelihood per word {:.4f} (perplexity {:.2f}), tension {:.3f}", iteration,
                 direction_name(direction), per_word, std::exp(-per_word), stats.tension);
  });
  const bool both = flags.aligner.forward && flags.aligner.reverse;
  aligner.align({flags.src, flags.tgt}, [&](const std::vector<PairLinks>& chunk) {
    std::string text, forward_text, reverse_text;
    for (const PairLinks& links : chunk) {
      const Links& one = flags.aligner.forward ? links.forward : links.reverse;
      text += pharaoh_line(both ? symmetrize(links.forward, links.reverse, flags.symmetrization) : one) + '\n';
      forward_text += pharaoh_line(links.forward) + '\n';
      reverse_text += pharaoh_line(links.reverse) + '\n';
    }
    out.write(text);
    if (!flags.forward_out.empty()) forward_out.write(forward_text);
    if (!flags.reverse_out.empty()) reverse_out.write(reverse_text);
  });
  forward_out.commit();
  reverse_out.commit();
  out.commit();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attn-align: word alignments by a diagonal IBM Model 2 (fast_align's model) trained by EM"};
  app.footer(kFooter);
  using attn::apps::at_least;
  Flags flags;
  app.add_option("--src", flags.src, "source text to align, one tokenised sentence per line")->required();
  app.add_option("--tgt", flags.tgt, "its translation, line by line")->required();
  app.add_option("--train-src", flags.train_src, "more source text to train on (repeatable, with --train-tgt)");
  app.add_option("--train-tgt", flags.train_tgt, "its translation, line by line");
  app.add_option("--out", flags.out, "alignments file, written whole or not at all (default: standard output)");
  app.add_option("--forward-out", flags.forward_out, "also write the forward direction's links to this file");
  app.add_option("--reverse-out", flags.reverse_out, "also write the reverse direction's links to this file");
  app.add_option("--iterations", flags.aligner.iterations, "EM iterations (default: 5)")->check(at_least(1));
  auto* symmetrize =
      attn::apps::add_choice_option(app, "--symmetrize", flags.symmetrization,
                                    "how both directions combine: intersection, union or grow-diag-final-and "
                                    "(default)");
  auto* forward = app.add_flag("--forward", flags.forward_only,
                               "train and write the forward direction only (each target word from the source)");
  app.add_flag("--reverse", flags.reverse_only,
               "train and write the reverse direction only (each source word from the target)")
      ->excludes(forward)
      ->excludes(symmetrize);
  forward->excludes(symmetrize);
  app.add_flag("--lowercase", flags.aligner.lowercase, "lowercase words before training and aligning");
  app.add_option("--p0", flags.aligner.model.null_probability, "prior probability of a link to no word (default: 0.08)")
      ->check(attn::apps::number_check([](double value) { return value > 0 && value < 1; }, "in (0, 1)", "(0,1)"));
  app.add_option("--tension", flags.aligner.model.initial_tension,
                 "initial diagonal tension lambda, then optimised by EM (default: 4)")
      ->check(at_least(0));
  app.add_flag("--fixed-tension", flags.fixed_tension, "keep --tension instead of optimising it");
  app.add_option("--threads", flags.threads, "OpenMP threads (default: OpenMP's)")->check(at_least(1));
  app.add_flag("--quiet", flags.quiet, "no progress lines on stderr");
  return attn::apps::run_app(app, argc, argv, [&] { return align(flags); });
}
