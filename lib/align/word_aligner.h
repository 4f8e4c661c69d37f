#pragma once
// attn-align's aligner: the diagonal IBM Model 2 (align/diagonal_model.h) trained by EM in
// one or both directions over parallel text that streams (align/word_corpus.h: chunks of
// lines; the vocabularies, the co-occurring word pairs and the model's tables stay in memory,
// the text does not), then the Viterbi links of each line.
//
// Directions: forward generates the target words from the source (each target word links to
// one source word or to none), reverse the source words from the target. Both report links in
// (source, target) coordinates, ready for symmetrisation (align/symmetrize.h).
#include <cstdint>
#include <functional>
#include <vector>

#include "align/diagonal_model.h"
#include "align/word_corpus.h"

namespace attn::align {

enum class Direction { forward, reverse };

struct AlignerOptions {
  int iterations = 5;
  bool lowercase = false;      // split_words' lowering, in training and alignment alike
  bool forward = true;         // train the forward direction
  bool reverse = true;         // train the reverse direction
  int64_t chunk_lines = 8192;  // line pairs read, and aligned in parallel, at a time
  DiagonalModelOptions model;
};

// One line pair's links, by direction (empty for a direction not trained).
struct PairLinks {
  Links forward, reverse;
};

class WordAligner {
 public:
  // Reads every corpus once for the vocabularies and the word pairs that co-occur.
  WordAligner(std::vector<TextPair> corpora, AlignerOptions options);

  // EM over the corpora: options.iterations passes, each an E-step over every line pair for
  // every trained direction, then their M-steps; `report` hears each direction's statistics.
  void train(const std::function<void(int iteration, Direction, const IterationStats&)>& report);

  // The links of every line pair of `files`, in chunks in line order. Words the corpora never
  // held get no link.
  void align(const TextPair& files, const std::function<void(const std::vector<PairLinks>&)>& chunk) const;

  int32_t source_words() const { return source_vocabulary_.size(); }
  int32_t target_words() const { return target_vocabulary_.size(); }

 private:
  // Both sides' ids; words never seen are -1 (`grow`: added to the vocabularies instead).
  std::vector<EncodedPair> encode(const std::vector<WordPair>& pairs, bool grow);
  std::vector<EncodedPair> encode(const std::vector<WordPair>& pairs) const;

  std::vector<TextPair> corpora_;
  AlignerOptions options_;
  WordVocabulary source_vocabulary_, target_vocabulary_;
  std::vector<DiagonalModel> forward_, reverse_;  // zero or one model each
};

}  // namespace attn::align
