#pragma once
// Vocab: a SentencePiece model (unigram or BPE) behind a small value type, and train_vocab,
// which makes one through SentencePiece's C++ trainer (not the spm_train CLI).
//
// SentencePiece reads every line of its inputs, however few it keeps. Inputs larger in all than
// VocabTrainOptions::sample_above_bytes are therefore sampled first (data/line_sample.h), so the
// time to train a vocabulary does not grow with the corpus; smaller ones go to SentencePiece
// whole, as they always did (the same inputs and options give the same model).
//
// Every model this project trains has the same special ids, so batches and models can rely on
// them without asking the vocabulary: pad 0, unk 1, bos 2, eos 3. Vocab::load refuses a model
// trained with other ids.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/choice.h"
#include "io/config.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace attn::data {

inline constexpr int32_t kPadId = 0;
inline constexpr int32_t kUnkId = 1;
inline constexpr int32_t kBosId = 2;
inline constexpr int32_t kEosId = 3;

// Subword regularisation of training data: one segmentation drawn at random instead of the best.
// Unigram models: one of the nbest best segmentations, with probability proportional to
// exp(alpha * score) (SentencePiece's SampleEncode with nbest_size = nbest). BPE models:
// BPE-dropout, each merge skipped with probability alpha (nbest is not used).
struct SegmentationSampling {
  double alpha = 0;  // 0 = off
  int nbest = 64;
  bool on() const { return alpha > 0; }
};

struct VocabTrainOptions {
  std::vector<std::string> inputs;  // plain UTF-8 text, one sentence per line
  std::string model_prefix;         // writes PREFIX.model and PREFIX.vocab
  // vocab.* and train.seed's declared defaults (io/config.h).
  VocabType type = io::defaults<io::VocabConfig>().type;
  int vocab_size = io::defaults<io::VocabConfig>().size;  // exact: fewer possible pieces is an error
  // Share of characters kept as pieces; the rest map to unk.
  float character_coverage = float(io::defaults<io::VocabConfig>().character_coverage);
  // A random sample of this many sentences when there are more.
  int64_t max_sentences = io::defaults<io::VocabConfig>().max_sentences;
  uint64_t seed = uint64_t(io::defaults<io::TrainConfig>().seed);  // SentencePiece's sampling seed
  int threads = 0;                                                 // 0: OpenMP's default thread count
  // Inputs larger than this in all: max_sentences lines are drawn from them by sample_lines,
  // written to PREFIX.sample.txt (removed afterwards) and given to SentencePiece instead.
  int64_t sample_above_bytes = int64_t{64} << 20;
};

// Trains and writes the model. SentencePiece's own logging is silenced (it stays off for the
// process). Errors (a missing input, one without text, an unknown type, a vocab_size the
// inputs cannot fill) throw attn::Error naming the inputs. A sampled input "has no text" when
// its sample holds no line, which the sampled pass finds without reading a file with text whole.
void train_vocab(const VocabTrainOptions& options);

class Vocab {
 public:
  // Throws attn::Error naming `path` when it is missing or not a SentencePiece model, or when
  // the model's special ids differ from kPadId/kUnkId/kBosId/kEosId.
  static Vocab load(const std::string& path);

  // Text -> ids, without bos or eos. Never fails on bad input: SentencePiece's normaliser turns
  // each malformed UTF-8 byte into U+FFFD, which is not a piece, so it encodes as unk (a run of
  // unknown characters may merge into one unk).
  std::vector<int32_t> encode(const std::string& text) const;
  // A sampled segmentation (see SegmentationSampling) of `text`; it decodes to what encode()'s
  // does. The draws are a function of `key` alone: SentencePiece's own SampleEncode draws from
  // a per-thread generator that cannot be seeded per call, which would make the segmentations
  // depend on the thread count and the order of the calls, and break exact resume.
  std::vector<int32_t> encode_sampled(const std::string& text, const SegmentationSampling& sampling,
                                      uint64_t key) const;
  bool is_bpe() const { return bpe_; }
  // Ids -> text. Stops at the first eos, skips pad and bos; an id outside [0, size) throws.
  std::string decode(const std::vector<int32_t>& ids) const;

  std::string piece(int32_t id) const;                  // throws outside [0, size)
  int32_t piece_to_id(const std::string& piece) const;  // unk_id() for an unknown piece
  int32_t size() const;

  int32_t pad_id() const { return kPadId; }
  int32_t unk_id() const { return kUnkId; }
  int32_t bos_id() const { return kBosId; }
  int32_t eos_id() const { return kEosId; }

 private:
  explicit Vocab(std::shared_ptr<const sentencepiece::SentencePieceProcessor> processor);
  void check_id(int32_t id) const;
  std::vector<int32_t> sample_nbest(const std::string& text, const SegmentationSampling& sampling, uint64_t key) const;
  std::vector<int32_t> bpe_dropout(const std::string& text, double alpha, uint64_t key) const;

  // Shared and immutable: copies are cheap and encode() is safe to call from many threads.
  std::shared_ptr<const sentencepiece::SentencePieceProcessor> processor_;
  bool bpe_ = false;
};

// The work of encoding one line, in core/parallel.h's units (an element of a loop's work):
// SentencePiece takes about as long over a sentence as a loop over thousands of elements, so a
// loop over a handful of lines is already worth cutting into pieces.
inline constexpr int64_t kEncodeLineWork = 4096;

}  // namespace attn::data
