// attn-dump-attention: the attention weights of a trained model as tidy CSV, or hard alignments.
//   attn-dump-attention --model runs/en-it --src s.txt [--tgt t.txt] [--out att.csv]
//       [--kind cross] [--layer L] [--head H | --average-heads] [--beam N]
//   attn-dump-attention --model runs/en-it --src s.txt --tgt t.txt --alignments [pieces] [--alignment-layer L ...]
//       [--reverse-model runs/it-en [--symmetrize grow-diag-final-and]]
//   attn-dump-attention --model runs/en-it --src s.txt --tgt t.txt --choose-alignment links.txt
//   attn-dump-attention --model runs/en-it --src s.txt [--tgt t.txt] --html page.html   (the explorer's view)
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>

#include "alignment_flags.h"
#include "app_main.h"
#include "config_flags.h"
#include "core/check.h"
#include "core/parallel.h"
#include "data/corpus.h"
#include "decode/alignment.h"
#include "decode/alignment_choice.h"
#include "decode/attention_csv.h"
#include "decode/attention_dump.h"
#include "eval/alignment_score.h"
#include "run/load_run.h"
#include "run_defaults.h"
#include "serve/explorer_page.h"
#include "text_io.h"

namespace {

const char* const kFooter = R"(Forced mode (--tgt given): the weights the model gives the reference translation.
Free mode: the model translates each line first (greedy, or --beam N), then the weights of its
own translation are dumped (teacher-forced on that output: the same weights, one code path).

CSV columns: sentence,kind,layer,head,query_pos,query_token,key_pos,key_token,weight
  sentence   0-based input line (an empty line has no rows)
  kind       enc_self (source x source), cross (target x source), dec_self (target x target)
  head       the head index from 0, or "mean" with --average-heads (the RNN model: cross, layer 0, head 0)
  tokens     SentencePiece pieces, </s> included; query tokens of cross and dec_self are the output
             tokens y1 .. </s> each decoder position predicts; dec_self key tokens are the decoder's
             inputs <s> y1 ...; positions start at 0; padding never appears.
--alignments [words|pieces]: one line per input line of Pharaoh "i-j" links (source i, target j):
words are the whitespace-separated words of the text (forced mode: of --src and --tgt), pieces
the SentencePiece pieces, </s> excluded on both sides; a target token whose argmax is the source
</s> gets no link. --alignment-layer, --alignment-head, --alignment-shift, --alignment-threshold
and --alignment-words choose how links are read from the cross attention. --reverse-model RUN
(a run trained the other way, target -> source) reads the same pairs the other way round and
symmetrises both directions' word links (--symmetrize); each run reads its own extraction.
--reverse-checkpoint F loads the reverse run from F (e.g. its attn-average) instead of its default.
A run's extraction defaults to its alignment.json, which --choose-alignment writes, else,
for a run trained with train.guided_alignment, to the guided layer, head and shift.
--html FILE: instead of CSV, the attention explorer's view of the sentences (every map that --kind,
--layer and --head keep, and the run's own alignment links when every cross map is kept) as one
self-contained HTML page, the page attn-serve serves at /, with the data inside: it opens from
file:// with no server and downloads each view as PNG, SVG and this CSV.
--choose-alignment LINKS (forced mode): scores every extraction (each layer's mean and heads, shift
0 and 1, words any and mean) against reference word links of the --src/--tgt pairs (Pharaoh lines,
gold or an aligner's such as attn-align's; a line with tabs is read by its last field, as XL-WA's),
prints them best first (AER, precision, recall) and saves the best as the run's alignment.json,
the default of attn-translate, attn-dump-attention and attn-serve (--no-save: print only).
)";

struct Flags {
  std::vector<std::string> model_dirs;  // a vector only to refuse an ensemble clearly
  std::string checkpoint, src_path, tgt_path, out_path, kind, precision, choose_path, html_path;
  bool no_save = false;
  // --beam stays this program's own: free mode is greedy whatever the run's decode.beam.
  int layer = 0, head = 0, beam = 1;
  attn::apps::ConfigFlags config;  // --batch-size, --threads: keys of the run's config
  bool average_heads = false;
  attn::apps::AlignmentFlags alignments;
  bool has_layer = false, has_head = false;
};

attn::decode::AttentionDumpOptions dump_options(const Flags& flags, const attn::io::Config& config) {
  attn::decode::AttentionDumpOptions options;
  if (!flags.kind.empty()) options.selection.kind = attn::layers::attention_kind_from_name(flags.kind);
  if (flags.has_layer) options.selection.layer = flags.layer;
  if (flags.has_head) options.selection.head = flags.head;
  options.selection.average_heads = flags.average_heads;
  if (flags.alignments.enabled()) options.selection = attn::decode::alignment_selection();
  options.translate = attn::decode::translate_options(config);
  options.translate.search.beam = flags.beam;  // free mode: greedy unless --beam
  return options;
}

// The attention maps' format (decode/attention_writer.h): tidy CSV, pieces named by the run's
// vocabularies, or --html's page with the run's own alignment links when the selection keeps
// every cross map they may read.
std::unique_ptr<attn::decode::AttentionWriter> attention_writer(std::ostream& out, const Flags& flags,
                                                                const attn::run::LoadedRun& run,
                                                                const std::string& run_dir,
                                                                const std::vector<std::string>& sources,
                                                                const std::vector<std::string>& targets) {
  const attn::data::Vocab& source = run.vocab->source;
  const attn::data::Vocab& target = run.vocab->target;
  if (flags.html_path.empty())
    return std::make_unique<attn::decode::AttentionCsvWriter>(
        out, [&](int32_t id) { return source.piece(id); }, [&](int32_t id) { return target.piece(id); });
  const bool every_cross_map =
      (flags.kind.empty() || flags.kind == "cross") && !flags.has_layer && !flags.has_head && !flags.average_heads;
  std::optional<attn::decode::AlignmentExtraction> extraction;
  if (every_cross_map && attn::decode::cross_attention_shape(*run.model).layers > 0)
    extraction = attn::decode::run_alignment_extraction(run_dir, run.config);
  return std::make_unique<attn::serve::AttentionHtmlWriter>(out, source, target, sources, targets,
                                                            attn::serve::AttentionFilter{}, extraction, run_dir);
}

// --choose-alignment: every extraction scored against the reference links, best first; the best
// saved as the run's own unless --no-save.
void choose_alignment(const Flags& flags, const attn::run::LoadedRun& run, const attn::io::Config& config,
                      const std::string& run_dir, const std::vector<std::string>& sources,
                      const std::vector<std::string>& targets, std::ostream& out) {
  const std::vector<std::string> lines = attn::data::read_lines(flags.choose_path);
  ATTN_CHECK(lines.size() == sources.size(), "--choose-alignment ", flags.choose_path, " has ", lines.size(),
             " lines but --src ", flags.src_path, " has ", sources.size());
  const std::vector<attn::eval::AlignmentLinks> reference =
      attn::eval::parse_alignment_lines(lines, "--choose-alignment '" + flags.choose_path + "'");
  const attn::decode::TranslateOptions options = attn::decode::translate_options(config);
  const std::vector<attn::decode::RankedExtraction> ranked = attn::decode::rank_extractions(
      *run.model, run.vocab->source, run.vocab->target, sources, targets, reference, options);
  out << "rank\tAER\tprecision\trecall\textraction\n";
  for (size_t r = 0; r < ranked.size(); ++r)
    out << r + 1 << '\t' << std::fixed << std::setprecision(4) << ranked[r].score.aer << '\t'
        << ranked[r].score.precision << '\t' << ranked[r].score.recall << '\t'
        << attn::decode::describe(ranked[r].extraction) << '\n';
  const attn::decode::RankedExtraction& best = ranked.front();
  if (flags.no_save) return;
  const std::string saved = attn::decode::alignment_choice_path(run_dir);
  const std::string replaced =
      std::filesystem::exists(saved)
          ? "; it replaces " + attn::decode::describe(attn::decode::run_alignment_extraction(run_dir, run.config))
          : "";
  attn::decode::save_alignment_choice(run_dir, best, flags.choose_path, ranked.size());
  spdlog::info("saved {}: {} (AER {:.4f}){}", saved, attn::decode::describe(best.extraction), best.score.aer, replaced);
}

int dump(Flags& flags) {
  ATTN_CHECK(flags.model_dirs.size() <= 1, "--model is given ", flags.model_dirs.size(),
             " times: attn-dump-attention shows the attention of one model (ensembles are for attn-translate)");
  const std::string model_flag = flags.model_dirs.empty() ? "" : flags.model_dirs.front();
  const std::string run_dir = attn::apps::resolve_model_dir(model_flag);
  attn::run::LoadedRun run =
      attn::run::load_run(run_dir, flags.checkpoint, attn::apps::precision_flag(flags.precision));
  const attn::io::Config config = flags.config.applied(run.config);
  attn::set_parallel_threads(config.train.threads);
  std::optional<attn::apps::ReverseAligner> reverse;  // loaded before any output is opened
  if (flags.alignments.symmetrized())                 // the reverse run's own batch size unless --batch-size
    reverse.emplace(flags.alignments, attn::apps::precision_flag(flags.precision),
                    flags.config.sets("decode.batch_size") ? config.decode.batch_size : 0);
  const std::vector<std::string> sources = attn::data::read_lines(flags.src_path);
  std::vector<std::string> targets;
  if (!flags.tgt_path.empty()) {
    targets = attn::data::read_lines(flags.tgt_path);
    ATTN_CHECK(sources.size() == targets.size(), "--src ", flags.src_path, " has ", sources.size(), " lines but --tgt ",
               flags.tgt_path, " has ", targets.size());
  }
  attn::apps::TextOutput output(flags.html_path.empty() ? flags.out_path : flags.html_path,
                                flags.html_path.empty() ? "the attention" : "the attention page");
  std::ostream& out = output.stream();
  if (!flags.choose_path.empty()) {
    choose_alignment(flags, run, config, run_dir, sources, targets, out);
    output.finish();
    return 0;
  }

  const attn::data::Vocab& source_vocab = run.vocab->source;
  const attn::data::Vocab& target_vocab = run.vocab->target;
  std::unique_ptr<attn::decode::AttentionWriter> writer;
  const bool alignments = flags.alignments.enabled();
  const attn::decode::AlignmentExtraction extraction =
      alignments ? attn::apps::alignment_extraction(flags.alignments, run_dir, run.config)
                 : attn::decode::AlignmentExtraction{};
  if (!alignments) writer = attention_writer(out, flags, run, run_dir, sources, targets);
  // Alignments: one line per input line (an empty line's is empty), written once all are known.
  std::vector<attn::align::Links> links(alignments ? sources.size() : 0);
  const bool free_reverse = reverse && flags.tgt_path.empty();
  std::vector<std::string> outputs(free_reverse ? sources.size() : 0);  // the translations the reverse run reads
  auto sink = [&](const attn::decode::SentenceAttention& sentence) {
    if (writer) return writer->write(sentence);
    const size_t line = size_t(sentence.index);
    links[line] = attn::decode::alignment_links(sentence, extraction, source_vocab, target_vocab);
    if (!free_reverse) return;
    std::vector<int32_t> output = sentence.target;
    if (!output.empty() && output.back() == target_vocab.eos_id()) output.pop_back();
    outputs[line] = target_vocab.decode(output);
  };
  attn::decode::AttentionDumper dumper(*run.model, source_vocab, target_vocab, dump_options(flags, config));
  if (flags.tgt_path.empty())
    dumper.translated(sources, sink);
  else
    dumper.forced(sources, targets, sink);
  if (writer) writer->finish();
  if (reverse) links = reverse->symmetrized(links, sources, free_reverse ? outputs : targets);
  for (const attn::align::Links& line : links) out << attn::align::pharaoh_line(line) << '\n';
  output.finish();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attn-dump-attention: the attention weights of a trained attn model as tidy CSV"};
  app.footer(kFooter);
  using attn::apps::at_least;
  Flags flags;
  app.add_option("--model", flags.model_dirs,
                 "run directory (default: $ATTN_MODEL, else configs/en-it.json's output_dir, else runs/en-it)");
  app.add_option("--checkpoint", flags.checkpoint, attn::apps::kCheckpointHelp);
  app.add_option("--src", flags.src_path, "source text, one sentence per line")->required();
  auto* tgt = app.add_option("--tgt", flags.tgt_path, "reference translations, line by line (forced mode)");
  app.add_option("--out", flags.out_path,
                 "write this file, complete or not at all: it appears when all is written (default: standard output)");
  auto* kind = app.add_option("--kind", flags.kind, "enc_self, dec_self or cross (default: all kinds)")
                   ->check(CLI::IsMember({"enc_self", "dec_self", "cross"}));
  auto* layer = app.add_option("--layer", flags.layer, "layer, from 0 (default: all layers)")->check(at_least(0));
  auto* head = app.add_option("--head", flags.head, "head, from 0 (default: all heads)")->check(at_least(0));
  auto* average = app.add_flag("--average-heads", flags.average_heads,
                               "one map per kind and layer: the mean over heads (head column: mean)");
  average->excludes(head);
  attn::apps::add_alignment_options(app, flags.alignments)
      ->excludes(kind)
      ->excludes(layer)
      ->excludes(head)
      ->excludes(average);
  auto* choose = app.add_option("--choose-alignment", flags.choose_path,
                                "reference word links of the --src/--tgt pairs: rank every extraction by AER and "
                                "save the best as the run's alignment.json (see below)")
                     ->needs(tgt)
                     ->excludes(kind)
                     ->excludes(layer)
                     ->excludes(head)
                     ->excludes(average)
                     ->excludes("--alignments");
  app.add_option("--html", flags.html_path,
                 "write the explorer's page of these sentences to this file instead of CSV (see below)")
      ->excludes("--out")
      ->excludes(average)
      ->excludes("--alignments")
      ->excludes(choose);
  app.add_flag("--no-save", flags.no_save, "with --choose-alignment: print the ranking only")->needs(choose);
  app.add_option("--beam", flags.beam, "free mode: beam size; 1 = greedy (default: 1)")
      ->check(at_least(1))
      ->excludes(tgt);
  attn::apps::add_config_flag(app, "--batch-size", "decode.batch_size", flags.config);
  attn::apps::add_precision_option(app, flags.precision);
  attn::apps::add_config_flag(app, "--threads", "train.threads", flags.config);
  return attn::apps::run_app(app, argc, argv, [&] {
    flags.has_layer = layer->count() > 0;
    flags.has_head = head->count() > 0;
    return dump(flags);
  });
}
