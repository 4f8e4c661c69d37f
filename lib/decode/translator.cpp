#include "decode/translator.h"

#include <algorithm>
#include <spdlog/spdlog.h>
#include <utility>

#include "core/check.h"
#include "core/parallel.h"
#include "models/model_factory.h"

namespace attn::decode {

data::Batch source_batch(const std::vector<const std::vector<int32_t>*>& sentences, int64_t max_length) {
  data::Batch batch;
  batch.size = static_cast<int64_t>(sentences.size());
  int64_t longest = 1;
  for (const auto* sentence : sentences) longest = std::max<int64_t>(longest, sentence->size());
  ATTN_CHECK(max_length <= 0 || longest <= max_length, "source_batch: a sentence of ", longest,
             " tokens exceeds the limit of ", max_length);
  batch.src_len = data::pad_length(longest, kInferencePadMultiple);
  if (max_length > 0) batch.src_len = std::min(batch.src_len, max_length);
  batch.src.assign(batch.size * batch.src_len, data::kPadId);
  for (int64_t b = 0; b < batch.size; ++b) {
    const auto& sentence = *sentences[b];
    std::copy(sentence.begin(), sentence.end(), batch.src.begin() + b * batch.src_len);
    batch.src_lengths.push_back(static_cast<int32_t>(sentence.size()));
    batch.src_tokens += static_cast<int64_t>(sentence.size());
  }
  return batch;
}

TranslateOptions translate_options(const io::Config& config) {
  const io::DecodeConfig& d = config.decode;
  TranslateOptions options;
  options.search.beam = d.beam;
  options.search.nbest = d.nbest;
  options.search.length_penalty = float(d.length_penalty);
  options.search.max_len_ratio = float(d.max_len_ratio);
  options.search.max_len_extra = d.max_len_extra;
  options.search.min_length = d.min_length;
  options.search.no_repeat_ngram = d.no_repeat_ngram;
  options.search.repetition_penalty = float(d.repetition_penalty);
  options.prefix = d.prefix;  // text; the Translator encodes it with the target vocabulary
  options.batch_size = d.batch_size;
  options.batch_tokens = d.batch_tokens;
  options.parallel_batches = d.parallel_batches;
  options.max_source_tokens = options.search.max_output_tokens = models::max_sequence_length(config);
  return options;
}

TranslateOptions translate_options(const std::vector<const io::Config*>& configs) {
  ATTN_CHECK(!configs.empty(), "translate_options: no model config");
  TranslateOptions options = translate_options(*configs.front());
  for (const io::Config* config : configs) {
    const int64_t limit = models::max_sequence_length(*config);
    options.max_source_tokens = std::min(options.max_source_tokens, limit);
    options.search.max_output_tokens = std::min(options.search.max_output_tokens, limit);
  }
  return options;
}

std::vector<std::vector<int64_t>> length_sorted_batches(const std::vector<std::vector<int32_t>>& encoded,
                                                        int64_t batch_size, int64_t batch_tokens) {
  ATTN_CHECK(batch_size > 0, "decoding batch size ", batch_size, " must be positive");
  ATTN_CHECK(batch_tokens >= 0, "decoding batch tokens ", batch_tokens, " must be >= 0");
  std::vector<int64_t> order;
  for (size_t i = 0; i < encoded.size(); ++i)
    if (!encoded[i].empty()) order.push_back(int64_t(i));
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return encoded[a].size() < encoded[b].size(); });
  // Lengths ascend, so a sentence added to a batch is its longest.
  const auto fits = [&](const std::vector<int64_t>& batch, int64_t line) {
    const int64_t rows = int64_t(batch.size()) + 1;
    return rows <= batch_size && (batch_tokens == 0 || rows * int64_t(encoded[line].size()) <= batch_tokens);
  };
  std::vector<std::vector<int64_t>> batches;
  for (int64_t line : order) {
    if (batches.empty() || !fits(batches.back(), line)) batches.emplace_back();
    batches.back().push_back(line);
  }
  return batches;
}

Translator::Translator(const models::Seq2SeqModel& model, const data::Vocab& source_vocab,
                       const data::Vocab& target_vocab, TranslateOptions options)
    : model_(model), source_vocab_(source_vocab), target_vocab_(target_vocab), options_(std::move(options)) {
  if (options_.prefix.empty()) return;
  ATTN_CHECK(options_.search.prefix.empty(), "translator: a prefix given both as text and as ids");
  options_.search.prefix = encode_prefix(options_.prefix);
  options_.prefix.clear();  // held as ids from now on: options() can build another Translator
}

std::vector<int32_t> Translator::encode_prefix(const std::string& text) const { return target_vocab_.encode(text); }

std::vector<std::vector<int32_t>> encode_lines(const std::vector<std::string>& lines, const data::Vocab& vocab,
                                               int64_t max_tokens, const std::string& side, int64_t first_line) {
  const auto count = static_cast<int64_t>(lines.size());
  std::vector<std::vector<int32_t>> encoded(lines.size());
  std::vector<char> truncated(lines.size(), 0);
  parallel_for(count, data::kEncodeLineWork, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      try {
        std::vector<int32_t>& ids = encoded[i];
        ids = vocab.encode(lines[i]);
        if (max_tokens > 0 && int64_t(ids.size()) >= max_tokens) {
          ids.resize(max_tokens - 1);  // room for eos
          truncated[i] = 1;
        }
        if (!ids.empty()) ids.push_back(data::kEosId);
      } catch (const std::exception& error) {
        ATTN_CHECK(false, side, " line ", first_line + i, ": ", error.what());
      }
    }
  });
  for (int64_t i = 0; i < count; ++i)
    if (truncated[i])
      spdlog::warn("{} line {} is longer than {} tokens; using its first {}", side, first_line + i, max_tokens - 1,
                   max_tokens - 1);
  return encoded;
}

std::string Translator::detokenize(const Hypothesis& hypothesis) const {
  return target_vocab_.decode(hypothesis.tokens);
}

std::vector<Translation> Translator::translate(const std::vector<std::string>& lines, int64_t first_line,
                                               const std::vector<std::string>& prefixes) const {
  ATTN_CHECK(prefixes.empty() || prefixes.size() == lines.size(), "translate: ", prefixes.size(), " prefixes for ",
             lines.size(), " lines");
  OutputPrefixes encoded_prefixes;
  for (const std::string& prefix : prefixes) encoded_prefixes.push_back(encode_prefix(prefix));
  return translate_ids(encode_lines(lines, source_vocab_, options_.max_source_tokens, "input", first_line), first_line,
                       encoded_prefixes);
}

std::vector<Translation> Translator::translate_ids(const std::vector<std::vector<int32_t>>& encoded, int64_t first_line,
                                                   const OutputPrefixes& prefixes) const {
  ATTN_CHECK(prefixes.empty() || prefixes.size() == encoded.size(), "translate: ", prefixes.size(), " prefixes for ",
             encoded.size(), " lines");
  std::vector<Translation> result(encoded.size());
  const std::vector<std::vector<int64_t>> batches =
      length_sorted_batches(encoded, options_.batch_size, options_.batch_tokens);
  auto translate_batch = [&](const std::vector<int64_t>& lines) {
    std::vector<const std::vector<int32_t>*> sentences;
    for (int64_t line : lines) sentences.push_back(&encoded[line]);
    data::Batch batch = source_batch(sentences, options_.max_source_tokens);
    std::vector<uint64_t> streams;  // sampling's: each line draws from its own
    for (int64_t line : lines) streams.push_back(uint64_t(first_line + line));
    OutputPrefixes batch_prefixes;  // none, or each line's
    if (!prefixes.empty())
      for (int64_t line : lines) batch_prefixes.push_back(prefixes[size_t(line)]);
    std::vector<std::vector<Hypothesis>> found = search(model_, batch, options_.search, streams, batch_prefixes);
    for (size_t i = 0; i < lines.size(); ++i) {
      Translation& translation = result[lines[i]];
      translation.nbest = std::move(found[i]);
      translation.source = encoded[lines[i]];
      translation.text = detokenize(translation.nbest.front());
    }
  };
  if (!options_.parallel_batches || batches.size() < 2) {
    for (const std::vector<int64_t>& lines : batches) translate_batch(lines);
    return result;
  }
  // A batch a piece, the longest first: the batches are sorted shortest first, and a thread that
  // finds none left while the other decodes the longest would wait the longest.
  // A loop of at most 4,096 of them: run_pieces takes at most 65,535 pieces, and a whole file
  // translated at batch size 1 could be more.
  constexpr int64_t kBatchesALoop = 4096;
  const int64_t count = int64_t(batches.size());
  for (int64_t done = 0; done < count; done += kBatchesALoop) {
    auto run = [&](int64_t piece) { translate_batch(batches[size_t(count - 1 - done - piece)]); };
    run_pieces(std::min(kBatchesALoop, count - done), PieceFunction(run));
  }
  return result;
}

TranslationWindow::TranslationWindow(const Translator& translator)
    : translator_(translator),
      capacity_(size_t(std::max(1, translator.options().window_batches)) *
                size_t(std::max(1, translator.options().batch_size))) {}

bool TranslationWindow::add(std::string line) {
  lines_.push_back(std::move(line));
  return lines_.size() >= capacity_;
}

std::vector<Translation> TranslationWindow::translate() {
  std::vector<Translation> translations = translator_.translate(lines_, next_line_);
  next_line_ += int64_t(lines_.size());
  lines_.clear();
  return translations;
}

}  // namespace attn::decode
