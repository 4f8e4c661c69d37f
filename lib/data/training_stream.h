#pragma once
// TrainingStream: training batches from corpora of any size, in bounded memory.
//
// The corpora stream through a window of at most buffer_pairs sentence pairs. A window is read
// and encoded, then batched like one epoch of the Batcher (batcher.h: length-bucketed, bounded
// by tokens, shuffled with the draws of (seed, window number)). While the trainer takes one
// window's batches, the next window is read and encoded on a background thread, so a step
// never waits for SentencePiece. Memory is two windows (packed: ~150 bytes for a pair of 30
// tokens a side), whatever the corpus size.
//
// Several corpora: each pair of a window comes from a corpus drawn at random in proportion to
// the weights (one corpus needs no draws). A corpus read to its end starts over from its first
// line; an epoch ends when every corpus has been read through once more since the epoch began,
// and the window in progress closes there. With one corpus an epoch is exactly one pass over
// its files: every pair once.
//
// Window sizes ramp up: 1/16, 1/8, 1/4 and 1/2 of buffer_pairs, then buffer_pairs, so the first
// step waits for a sixteenth of a window. A single corpus that fits in a window whole is read
// and encoded once; later epochs reuse it, unless subword sampling or concatenation is on: those
// are drawn anew for every window, so that every epoch sees fresh segmentations and joins.
//
// Training-only augmentation, both drawn from (seed, window number, pair's place in the window),
// so independent of the encoding threads and exact on resume: subword regularisation
// (options.sampling: each side's segmentation sampled, Vocab::encode_sampled) and concatenated
// pairs (options.concat, pair_concat.h) made from the window's encoded pairs before it is batched.
//
// Reference alignments (guided alignment training): a corpus with an alignments file has it read
// line by line with its pairs (the reader's offset in it is part of its position), and each kept
// pair carries its piece links (Example::links, training_links.h) into its batch; a join of pairs
// carries each part's links shifted. A bad line is an error naming the file and the line.
//
// Resume: a StreamPosition (the window's number and epoch, the readers' byte offsets at its
// start, batches taken from it, pairs seen per corpus) restores the stream exactly: the window
// is read again from the same offsets and planned with the same draws. Everything is a function
// of the files, the options and the position, so data-parallel ranks that each run a stream
// read identical batches.
#include <atomic>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "data/batch.h"
#include "data/batcher.h"
#include "data/packed_examples.h"
#include "data/pair_concat.h"
#include "data/pair_reader.h"
#include "data/vocab.h"
#include "io/config.h"

namespace attn::data {

struct CorpusFiles {
  std::string src, tgt;
  double weight = 1.0;       // > 0
  std::string alignments{};  // Pharaoh links of each pair (training_links.h), read in lockstep; "" = none
};

struct StreamOptions {
  int64_t buffer_pairs = io::defaults<io::DataConfig>().buffer_pairs;  // pairs in a full window
  int max_len = io::defaults<io::DataConfig>().max_len;  // as encode_example's: longer pairs are skipped and counted
  BatcherOptions batching;
  int threads = 1;                // encoding threads while nothing trains (the first window, a resumed one)
  SegmentationSampling sampling;  // subword regularisation; off by default
  ConcatOptions concat;           // concatenated pairs; off by default
  AlignmentLevel alignment_level =
      io::defaults<io::DataConfig>().train_alignments_level;  // what CorpusFiles::alignments count
};

// One corpus's reader: where it stands in its files, and how often it went through them.
struct CorpusPosition {
  PairReaderPosition reader;
  int64_t passes = 0;

  bool operator==(const CorpusPosition& other) const { return reader == other.reader && passes == other.passes; }
};

struct StreamPosition {
  int64_t window = 1;                 // the current window's number, from 1
  int64_t epoch = 1;                  // its epoch, from 1
  int64_t batch_in_window = 0;        // batches already taken from it
  std::vector<CorpusPosition> start;  // each corpus's reader before the window's first pair
  std::vector<int64_t> pairs_seen;    // per corpus: pairs in batches taken so far
};

struct WindowStats {
  int64_t read = 0, kept = 0, skipped_long = 0, skipped_empty = 0;
  int64_t joined = 0;  // kept pairs that became concatenations
  double seconds = 0;  // reading and encoding it
};

// One window: what it holds and where the readers stand around it.
struct Window {
  int64_t serial = 1, epoch = 1;
  std::vector<CorpusPosition> start, end;
  bool ends_epoch = false;
  std::shared_ptr<const PackedExamples> examples;
  std::vector<std::vector<int64_t>> plan;  // batches, as positions in *examples
  WindowStats stats;
};

class TrainingStream {
 public:
  // Opens nothing yet: the first window is read by load() or the first next().
  TrainingStream(std::vector<CorpusFiles> corpora, const Vocab& src_vocab, const Vocab& tgt_vocab,
                 StreamOptions options);
  ~TrainingStream();  // abandons a window being read ahead
  TrainingStream(const TrainingStream&) = delete;
  TrainingStream& operator=(const TrainingStream&) = delete;

  // Reads the first window (or the one set_position chose) now, unless it is already read.
  void load();
  // The next batch. A read or alignment error of a corpus file throws attn::Error naming the
  // file and line; the stream's position is then still that after the last batch returned.
  Batch next();

  // The epoch of the next batch.
  int64_t epoch() const;
  StreamPosition position() const;
  // Continues from `position`, which must come from streams over the same files and options.
  void set_position(const StreamPosition& position);
  const std::vector<int64_t>& pairs_seen() const { return pairs_seen_; }
  const std::vector<CorpusFiles>& corpora() const;

  struct Setup;  // the files, vocabularies and options, shared with the read-ahead thread

 private:
  void start_at(Window window);
  void advance();
  void read_ahead();
  void abandon_read_ahead();

  std::shared_ptr<const Setup> setup_;
  StreamPosition pending_;  // where load() starts
  bool loaded_ = false;
  Window current_;
  int64_t batch_in_window_ = 0;
  std::vector<int64_t> pairs_seen_;
  int epoch_ends_without_pairs_ = 0;
  std::future<Window> ahead_;
  std::shared_ptr<std::atomic<bool>> cancel_ahead_;
};

// Pairs in window `serial`: the ramp described above.
int64_t window_capacity(int64_t buffer_pairs, int64_t serial);

}  // namespace attn::data
