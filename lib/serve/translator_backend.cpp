#include "serve/translator_backend.h"

#include <algorithm>

#include "core/parallel.h"
#include "decode/alignment.h"

namespace attn::serve {

TranslatorBackend::TranslatorBackend(const models::Seq2SeqModel& model, const data::Vocab& source_vocab,
                                     const data::Vocab& target_vocab, decode::TranslateOptions options, int threads)
    : model_(model), source_vocab_(source_vocab), target_vocab_(target_vocab), options_(options), threads_(threads) {}

// The thread count is the process' (core/parallel.h); the decoding thread sets it before its
// first batch, as the configs of the runs it serves ask.
void TranslatorBackend::start_thread() { set_parallel_threads(threads_); }

std::vector<std::vector<int32_t>> TranslatorBackend::encode(const std::vector<std::string>& texts) {
  return decode::encode_lines(texts, source_vocab_, options_.max_source_tokens, "request sentence");
}

std::vector<SentenceResult> TranslatorBackend::decode(
    const std::vector<const std::vector<int32_t>*>& sentences, int nbest,
    const std::vector<std::optional<decode::AlignmentExtraction>>& alignments,
    const std::vector<std::optional<std::string>>& prefixes) {
  decode::TranslateOptions options = options_;
  options.search.nbest = nbest;
  // The queue's sentences as one batch, unless it holds more than decode.batch_tokens source
  // tokens; with decode.parallel_batches, as a batch a thread, each decoded on its own thread.
  const int count = int(sentences.size()), threads = parallel_threads();
  options.batch_size =
      options.parallel_batches && threads > 1 ? (count + threads - 1) / threads : std::max(options.batch_size, count);
  const decode::Translator translator(model_, source_vocab_, target_vocab_, options);
  std::vector<std::vector<int32_t>> encoded;
  encoded.reserve(sentences.size());
  for (const auto* sentence : sentences) encoded.push_back(*sentence);
  decode::OutputPrefixes encoded_prefixes;  // none, unless a sentence has its own
  if (std::any_of(prefixes.begin(), prefixes.end(), [](const auto& p) { return p.has_value(); }))
    for (const std::optional<std::string>& prefix : prefixes)
      encoded_prefixes.push_back(prefix ? translator.encode_prefix(*prefix) : translator.options().search.prefix);
  std::vector<decode::Translation> translations = translator.translate_ids(encoded, 1, encoded_prefixes);
  std::vector<std::vector<align::Links>> links;
  if (std::any_of(alignments.begin(), alignments.end(), [](const auto& a) { return a.has_value(); }))
    links =
        decode::nbest_alignments(model_, translations, alignments, source_vocab_, target_vocab_, options.batch_size);
  std::vector<SentenceResult> results(sentences.size());
  for (size_t i = 0; i < sentences.size(); ++i) {
    for (const decode::Hypothesis& hypothesis : translations[i].nbest)
      results[i].texts.push_back(translator.detokenize(hypothesis));
    results[i].hypotheses = std::move(translations[i].nbest);
    if (!links.empty()) results[i].alignments = std::move(links[i]);
  }
  return results;
}

}  // namespace attn::serve
