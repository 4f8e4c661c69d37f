#include "decode/translator.h"

#include <optional>
#include <spdlog/spdlog.h>

#include "core/check.h"

namespace attn::decode {

data::Batch source_batch(const std::vector<const std::vector<int32_t>*>& sentences, int64_t max_length) {
  data::Batch batch;
  batch.size = static_cast<int64_t>(sentences.size());
  int64_t longest = 1;
  for (const auto* sentence : sentences) longest = std::max<int64_t>(longest, sentence->size());
  ATTN_CHECK(max_length <= 0 || longest <= max_length, "source_batch: a sentence of ", longest,
             " tokens exceeds the limit of ", max_length);
  batch.src_len = data::pad_length(longest, 8);
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

Translator::Translator(const models::Seq2SeqModel& model, const data::Vocab& source_vocab,
                       const data::Vocab& target_vocab, TranslateOptions options)
    : model_(model), source_vocab_(source_vocab), target_vocab_(target_vocab), options_(options) {}

std::vector<std::vector<int32_t>> encode_lines(const std::vector<std::string>& lines, const data::Vocab& vocab,
                                               int64_t max_tokens, const std::string& side, int64_t first_line) {
  const auto count = static_cast<int64_t>(lines.size());
  std::vector<std::vector<int32_t>> encoded(lines.size());
  std::vector<char> truncated(lines.size(), 0);
  std::optional<std::string> failure;  // an exception must not leave an OpenMP region
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < count; ++i) {
    try {
      std::vector<int32_t>& ids = encoded[i];
      ids = vocab.encode(lines[i]);
      if (max_tokens > 0 && int64_t(ids.size()) >= max_tokens) {
        ids.resize(max_tokens - 1);  // room for eos
        truncated[i] = 1;
      }
      if (!ids.empty()) ids.push_back(data::kEosId);
    } catch (const std::exception& error) {
#pragma omp critical(attn_encode_lines_failure)
      if (!failure) failure = side + " line " + std::to_string(first_line + i) + ": " + error.what();
    }
  }
  ATTN_CHECK(!failure, *failure);
  for (int64_t i = 0; i < count; ++i)
    if (truncated[i])
      spdlog::warn("{} line {} is longer than {} tokens; using its first {}", side, first_line + i, max_tokens - 1,
                   max_tokens - 1);
  return encoded;
}

std::string Translator::detokenize(const Hypothesis& hypothesis) const {
  return target_vocab_.decode(hypothesis.tokens);
}

std::vector<Translation> Translator::translate(const std::vector<std::string>& lines, int64_t first_line) const {
  return translate_ids(encode_lines(lines, source_vocab_, options_.max_source_tokens, "input", first_line));
}

std::vector<Translation> Translator::translate_ids(const std::vector<std::vector<int32_t>>& encoded) const {
  const size_t count = encoded.size();
  const int64_t limit = options_.max_source_tokens;  // eos included
  std::vector<int64_t> lengths(count);
  std::vector<int64_t> nonempty;
  for (size_t i = 0; i < count; ++i) {
    lengths[i] = int64_t(encoded[i].size());
    if (!encoded[i].empty()) nonempty.push_back(int64_t(i));
  }
  // Length-sorted batches of the non-empty lines; results go back to their input index.
  std::stable_sort(nonempty.begin(), nonempty.end(), [&](int64_t a, int64_t b) { return lengths[a] < lengths[b]; });
  std::vector<Translation> result(count);
  for (size_t first = 0; first < nonempty.size(); first += options_.batch_size) {
    size_t last = std::min(nonempty.size(), first + size_t(options_.batch_size));
    std::vector<const std::vector<int32_t>*> sentences;
    for (size_t i = first; i < last; ++i) sentences.push_back(&encoded[nonempty[i]]);
    data::Batch batch = source_batch(sentences, limit);
    std::vector<std::vector<Hypothesis>> found;
    if (options_.search.beam == 1) {
      for (Hypothesis& hypothesis : greedy_search(model_, batch, options_.search)) found.push_back({hypothesis});
    } else {
      found = beam_search(model_, batch, options_.search);
    }
    for (size_t i = first; i < last; ++i) {
      Translation& translation = result[nonempty[i]];
      translation.nbest = std::move(found[i - first]);
      translation.text = detokenize(translation.nbest.front());
    }
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
