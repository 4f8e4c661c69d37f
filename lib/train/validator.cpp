#include "train/validator.h"

#include <cmath>

#include "data/batcher.h"
#include "data/corpus.h"
#include "decode/alignment.h"
#include "decode/alignment_choice.h"
#include "decode/attention_dump.h"
#include "decode/translator.h"
#include "eval/alignment_score.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "models/model_factory.h"
#include "models/sequence_loss.h"

namespace attn::train {

namespace {

// An XL-WA line: source<TAB>target<TAB>links.
void read_gold_alignments(const std::string& path, std::vector<std::string>& sources, std::vector<std::string>& targets,
                          std::vector<std::string>& links) {
  const std::vector<std::string> lines = data::read_lines(path);
  ATTN_CHECK(!lines.empty(), "data.valid_alignment_gold: '", path, "' is empty");
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const size_t first = line.find('\t'), second = first == std::string::npos ? first : line.find('\t', first + 1);
    ATTN_CHECK(second != std::string::npos, "data.valid_alignment_gold: '", path, "' line ", i + 1,
               " is not source<TAB>target<TAB>links");
    sources.push_back(line.substr(0, first));
    targets.push_back(line.substr(first + 1, second - first - 1));
    links.push_back(line.substr(second + 1));
  }
}

}  // namespace

double ValidationResult::metric(ValidMetric name) const {
  switch (name) {
    case ValidMetric::bleu:
      return bleu;
    case ValidMetric::chrf:
      return chrf;
    case ValidMetric::loss:
      return -loss;
  }
  return -loss;
}

Validator::Validator(const io::Config& config, const run::Vocabularies& vocab) : vocab_(vocab), config_(config) {
  data::ParallelText text = data::read_parallel(config.data.valid_src, config.data.valid_tgt);
  if (config.data.valid_max_sentences > 0 && int64_t(text.src.size()) > config.data.valid_max_sentences) {
    text.src.resize(config.data.valid_max_sentences);
    text.tgt.resize(config.data.valid_max_sentences);
  }
  sources_ = text.src;
  references_ = text.tgt;
  // Every pair counts for loss: only a model's position limit (models::position_limit; an RNN
  // has none) bounds the sides, padding to a multiple of train.pad_multiple included.
  const int64_t pad = config.train.pad_multiple, limit = models::position_limit(config);
  const int max_len = limit > 0 ? int(limit / pad * pad) : 1 << 20;
  data::EncodedCorpus corpus = data::encode_corpus(text, vocab.source, vocab.target, max_len);
  data::BatcherOptions batching;
  batching.batch_tokens = config.train.batch_tokens;
  batching.pad_multiple = config.train.pad_multiple;
  batching.shuffle = false;  // sorted by length, in input order among equals
  data::Batcher batcher(std::move(corpus.examples), batching);
  for (int64_t i = 0; i < batcher.batches_per_epoch(); ++i) batches_.push_back(batcher.next());
  if (!config.data.valid_alignment_gold.empty())
    read_gold_alignments(config.data.valid_alignment_gold, gold_sources_, gold_targets_, gold_links_);
}

double Validator::alignment_error_rate(const models::Seq2SeqModel& model) const {
  decode::AttentionDumpOptions options;
  options.selection = decode::alignment_selection();
  options.translate = decode::translate_options(config_);
  decode::AttentionDumper dumper(model, vocab_.source, vocab_.target, options);
  const decode::AlignmentExtraction extraction = decode::trained_alignment_extraction(config_);
  std::vector<std::string> predicted(gold_sources_.size());
  dumper.forced(gold_sources_, gold_targets_, [&](const decode::SentenceAttention& sentence) {
    predicted[size_t(sentence.index)] =
        align::pharaoh_line(decode::alignment_links(sentence, extraction, vocab_.source, vocab_.target));
  });
  return eval::score_alignments(gold_links_, predicted, config_.data.valid_alignment_gold, "the forced alignments").aer;
}

ValidationResult Validator::run(const models::Seq2SeqModel& model, Precision precision) const {
  ValidationResult result;
  double nll = 0;
  int64_t tokens = 0;
  const models::SequenceLossOptions unsmoothed;  // the dev loss is plain -log p (nll_sum)
  for (const data::Batch& batch : batches_) {
    Tape tape;
    NoGradScope no_grad(tape);
    ops::CrossEntropyResult ce =
        models::sequence_loss(model, layers::RunContext{tape, false, nullptr, nullptr, precision}, batch, unsmoothed);
    nll += ce.nll_sum;
    tokens += ce.tokens;
  }
  result.loss = tokens ? nll / double(tokens) : 0.0;
  result.perplexity = std::exp(result.loss);

  decode::TranslateOptions options = decode::translate_options(config_);
  options.search.beam = 1;  // validation BLEU is greedy
  options.search.precision = precision;
  options.batch_size = 64;
  decode::Translator translator(model, vocab_.source, vocab_.target, options);
  std::vector<std::string> hypotheses;
  for (auto& translation : translator.translate(sources_)) hypotheses.push_back(translation.text);
  result.bleu = eval::corpus_bleu(hypotheses, references_).score;
  result.chrf = eval::corpus_chrf(hypotheses, references_).score;
  result.sentences = static_cast<int64_t>(sources_.size());
  if (!gold_sources_.empty()) result.aer = alignment_error_rate(model);
  return result;
}

}  // namespace attn::train
