#include "train/validator.h"

#include <cmath>

#include "data/batcher.h"
#include "data/corpus.h"
#include "decode/translator.h"
#include "eval/bleu.h"
#include "eval/chrf.h"
#include "models/model_factory.h"
#include "ops/cross_entropy.h"

namespace attn::train {

double ValidationResult::metric(const std::string& name) const {
  if (name == "bleu") return bleu;
  if (name == "chrf") return chrf;
  return -loss;
}

Validator::Validator(const io::Config& config, const Vocabularies& vocab) : vocab_(vocab), config_(config) {
  data::ParallelText text = data::read_parallel(config.data.valid_src, config.data.valid_tgt);
  if (config.data.valid_max_sentences > 0 && int64_t(text.src.size()) > config.data.valid_max_sentences) {
    text.src.resize(config.data.valid_max_sentences);
    text.tgt.resize(config.data.valid_max_sentences);
  }
  sources_ = text.src;
  references_ = text.tgt;
  // Every pair counts for loss: max_len only bounds the positions the model can hold, padding
  // (up to a multiple of train.pad_multiple) included.
  const int pad = config.train.pad_multiple;
  int max_len = config.model.type == "transformer" ? config.model.transformer.max_positions / pad * pad : 1 << 20;
  data::EncodedCorpus corpus = data::encode_corpus(text, vocab.source, vocab.target, max_len);
  data::Batcher batcher(std::move(corpus.examples), {config.train.batch_tokens, config.train.pad_multiple, 1, false});
  for (int64_t i = 0; i < batcher.batches_per_epoch(); ++i) batches_.push_back(batcher.next());
}

ValidationResult Validator::run(const models::Seq2SeqModel& model) const {
  ValidationResult result;
  double nll = 0;
  int64_t tokens = 0;
  for (const data::Batch& batch : batches_) {
    Tape tape;
    NoGradScope no_grad(tape);
    Tensor logits = model.forward(layers::RunContext{tape}, batch);  // (B, T, V)
    ops::CrossEntropyResult ce = ops::cross_entropy(tape, logits, batch.tgt_out, {0.f, data::kPadId});
    nll += ce.nll_sum;
    tokens += ce.tokens;
  }
  result.loss = tokens ? nll / double(tokens) : 0.0;
  result.perplexity = std::exp(result.loss);

  decode::TranslateOptions options;
  options.search.beam = 1;
  options.search.max_len_ratio = static_cast<float>(config_.decode.max_len_ratio);
  options.search.max_len_extra = config_.decode.max_len_extra;
  options.batch_size = 64;
  options.max_source_tokens = options.search.max_output_tokens = models::max_sequence_length(config_);
  decode::Translator translator(model, vocab_.source, vocab_.target, options);
  std::vector<std::string> hypotheses;
  for (auto& translation : translator.translate(sources_)) hypotheses.push_back(translation.text);
  result.bleu = eval::corpus_bleu(hypotheses, references_).score;
  result.chrf = eval::corpus_chrf(hypotheses, references_).score;
  result.sentences = static_cast<int64_t>(sources_.size());
  return result;
}

}  // namespace attn::train
