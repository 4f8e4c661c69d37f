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

EncodedSources encode_sources(const data::Vocab& vocab, const std::vector<std::string>& lines, int64_t max_tokens) {
  const auto count = static_cast<int64_t>(lines.size());
  EncodedSources sources;
  sources.ids.resize(lines.size());
  std::vector<char> truncated(lines.size(), 0);
  std::optional<std::string> failure;  // exceptions must not leave an OpenMP region
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < count; ++i) {
    try {
      std::vector<int32_t>& ids = sources.ids[i];
      ids = vocab.encode(lines[i]);
      if (max_tokens > 0 && int64_t(ids.size()) >= max_tokens) {
        ids.resize(max_tokens - 1);  // room for eos
        truncated[i] = 1;
      }
      if (!ids.empty()) ids.push_back(data::kEosId);
    } catch (const std::exception& error) {
#pragma omp critical(attn_encode_sources_failure)
      if (!failure) failure = "input line " + std::to_string(i + 1) + ": " + error.what();
    }
  }
  ATTN_CHECK(!failure, *failure);
  for (int64_t i = 0; i < count; ++i)
    if (truncated[i]) sources.truncated.push_back(i);
  return sources;
}

Translator::Translator(const models::Seq2SeqModel& model, const data::Vocab& source_vocab,
                       const data::Vocab& target_vocab, TranslateOptions options)
    : model_(model), source_vocab_(source_vocab), target_vocab_(target_vocab), options_(options) {}

std::string Translator::detokenize(const Hypothesis& hypothesis) const {
  return target_vocab_.decode(hypothesis.tokens);
}

std::vector<Translation> Translator::translate(const std::vector<std::string>& lines) const {
  const int64_t limit = options_.max_source_tokens;  // eos included
  EncodedSources sources = encode_sources(source_vocab_, lines, limit);
  for (int64_t line : sources.truncated)
    spdlog::warn("input line {} is longer than {} tokens; translating its first {}", line + 1, limit - 1, limit - 1);
  const std::vector<std::vector<int32_t>>& encoded = sources.ids;
  std::vector<int64_t> lengths(lines.size());
  std::vector<int64_t> nonempty;
  for (size_t i = 0; i < lines.size(); ++i) {
    lengths[i] = int64_t(encoded[i].size());
    if (!encoded[i].empty()) nonempty.push_back(int64_t(i));
  }
  // Length-sorted batches of the non-empty lines; results go back to their input index.
  std::stable_sort(nonempty.begin(), nonempty.end(), [&](int64_t a, int64_t b) { return lengths[a] < lengths[b]; });
  std::vector<Translation> result(lines.size());
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

}  // namespace attn::decode
