#include "align/word_aligner.h"

#include <algorithm>

#include "core/check.h"

namespace attn::align {

namespace {

using Chunk = std::vector<std::pair<const std::vector<int32_t>*, const std::vector<int32_t>*>>;

// Sorted distinct keys of `a` and `b` merged.
std::vector<uint64_t> merged(const std::vector<uint64_t>& a, std::vector<uint64_t> b) {
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  std::vector<uint64_t> out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

Links flipped(Links links) {
  for (Link& link : links) std::swap(link.first, link.second);
  return ordered(std::move(links));
}

}  // namespace

WordAligner::WordAligner(std::vector<TextPair> corpora, AlignerOptions options)
    : corpora_(std::move(corpora)), options_(options) {
  ATTN_CHECK(!corpora_.empty(), "no corpus to train the aligner on");
  ATTN_CHECK(options_.forward || options_.reverse, "the aligner needs a direction to train");
  ATTN_CHECK(options_.iterations >= 1, "aligner iterations ", options_.iterations, ": must be at least 1");
  std::vector<uint64_t> keys;  // (source << 32 | target) of every co-occurring word pair
  for (const TextPair& corpus : corpora_)
    read_word_pairs(corpus, options_.lowercase, options_.chunk_lines, [&](const std::vector<WordPair>& pairs) {
      std::vector<uint64_t> chunk_keys;
      for (const EncodedPair& pair : encode(pairs, true))
        for (int32_t s : pair.source)
          for (int32_t t : pair.target) chunk_keys.push_back(uint64_t(uint32_t(s)) << 32 | uint32_t(t));
      keys = merged(keys, std::move(chunk_keys));
    });
  CooccurrenceTable by_source(keys, source_vocabulary_.size());
  keys = {};
  if (options_.reverse)
    reverse_.emplace_back(by_source.transposed(target_vocabulary_.size()), source_vocabulary_.size(), options_.model);
  if (options_.forward) forward_.emplace_back(std::move(by_source), target_vocabulary_.size(), options_.model);
}

std::vector<EncodedPair> WordAligner::encode(const std::vector<WordPair>& pairs, bool grow) {
  if (!grow) return encode(pairs);
  std::vector<EncodedPair> encoded(pairs.size());
  for (size_t p = 0; p < pairs.size(); ++p) {
    for (const std::string& word : pairs[p].source) encoded[p].source.push_back(source_vocabulary_.add(word));
    for (const std::string& word : pairs[p].target) encoded[p].target.push_back(target_vocabulary_.add(word));
  }
  return encoded;
}

std::vector<EncodedPair> WordAligner::encode(const std::vector<WordPair>& pairs) const {
  std::vector<EncodedPair> encoded(pairs.size());
  for (size_t p = 0; p < pairs.size(); ++p) {
    for (const std::string& word : pairs[p].source) encoded[p].source.push_back(source_vocabulary_.find(word));
    for (const std::string& word : pairs[p].target) encoded[p].target.push_back(target_vocabulary_.find(word));
  }
  return encoded;
}

void WordAligner::train(const std::function<void(int, Direction, const IterationStats&)>& report) {
  for (int iteration = 1; iteration <= options_.iterations; ++iteration) {
    for (const TextPair& corpus : corpora_)
      read_word_pairs(corpus, options_.lowercase, options_.chunk_lines, [&](const std::vector<WordPair>& pairs) {
        const std::vector<EncodedPair> encoded = encode(pairs);
        Chunk forward, reverse;
        for (const EncodedPair& pair : encoded) {
          forward.push_back({&pair.source, &pair.target});
          reverse.push_back({&pair.target, &pair.source});
        }
        for (DiagonalModel& model : forward_) model.expect(forward);
        for (DiagonalModel& model : reverse_) model.expect(reverse);
      });
    for (DiagonalModel& model : forward_) report(iteration, Direction::forward, model.maximize());
    for (DiagonalModel& model : reverse_) report(iteration, Direction::reverse, model.maximize());
  }
}

void WordAligner::align(const TextPair& files, const std::function<void(const std::vector<PairLinks>&)>& chunk) const {
  read_word_pairs(files, options_.lowercase, options_.chunk_lines, [&](const std::vector<WordPair>& pairs) {
    const std::vector<EncodedPair> encoded = encode(pairs);
    std::vector<PairLinks> links(encoded.size());
    const auto count = int64_t(encoded.size());
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t p = 0; p < count; ++p) {
      for (const DiagonalModel& model : forward_)
        links[p].forward = model.viterbi(encoded[p].source, encoded[p].target);
      for (const DiagonalModel& model : reverse_)
        links[p].reverse = flipped(model.viterbi(encoded[p].target, encoded[p].source));
    }
    chunk(links);
  });
}

}  // namespace attn::align
