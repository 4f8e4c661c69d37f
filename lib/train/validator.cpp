#include "train/validator.h"

#include <cmath>

#include "data/batcher.h"
#include "data/corpus.h"
#include "decode/translator.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "models/model_factory.h"
#include "models/sequence_loss.h"

namespace attn::train {

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
  return result;
}

}  // namespace attn::train
