#pragma once
// Corpus: parallel text files -> encoded examples.
//
// Files are UTF-8, one sentence per line, the two sides aligned line by line. A trailing "\r"
// is stripped from every line, so files with CRLF (Windows) line endings read the same as LF.
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "data/training_links.h"
#include "data/vocab.h"

namespace attn::data {

// Every line of `path`, without its "\n" or "\r\n". A missing file throws, naming it.
std::vector<std::string> read_lines(const std::string& path);
// The same for a stream (attn-translate's standard input); `name` is for the error message.
// Bytes are kept as they are (invalid UTF-8 and NUL included); a last line without "\n"
// counts, and no line is made up for a stream that ends in "\n".
std::vector<std::string> read_lines(std::istream& stream, const std::string& name);

// A text file's lines, counted without keeping them (a check before anything is trained).
struct TextFileStats {
  int64_t lines = 0;       // as read_lines counts them
  int64_t text_lines = 0;  // lines with a character other than space, tab, CR, VT or FF
};
// Throws naming the file when it cannot be read. With max_bytes >= 0, only the first max_bytes
// bytes are read (a partial last line counts as a line).
TextFileStats text_file_stats(const std::string& path, int64_t max_bytes = -1);

struct ParallelText {
  std::vector<std::string> src, tgt;  // src[i] translates to tgt[i]
};

// Throws when either file is missing or empty, or when their line counts differ (the message
// names both files and both counts).
ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path);

// One sentence pair as ids; both sides end with eos. `index` is the pair's line in the text,
// so results can be written back in input order; `corpus` which of the training corpora it
// came from; `links` its piece links for guided alignment training (training_links.h).
struct Example {
  std::vector<int32_t> src, tgt;
  int64_t index = 0;
  int32_t corpus = 0;
  PieceLinks links{};  // reference alignments (data.train_alignments); empty without
};

enum class PairStatus : uint8_t { kept, too_long, empty };

// Encodes one pair into `example` (ids, eos appended to both sides) and says whether it is
// kept: both sides need 1..max_len-1 text tokens. An empty side counts first, whatever the
// other side's length.
// With `sampling` on, both sides get sampled segmentations (Vocab::encode_sampled), drawn
// with the keys mix64(key, 0) and mix64(key, 1): training data only.
PairStatus encode_example(const std::string& src, const std::string& tgt, const Vocab& src_vocab,
                          const Vocab& tgt_vocab, int max_len, Example& example,
                          const SegmentationSampling& sampling = {}, uint64_t key = 0);

struct EncodedCorpus {
  std::vector<Example> examples;  // in input order
  int64_t skipped_long = 0;       // pairs with a side longer than max_len tokens
  int64_t skipped_empty = 0;      // pairs with a side that encodes to no token

  int64_t skipped() const { return skipped_long + skipped_empty; }
};

// Encodes every pair (in parallel, OpenMP) and appends eos to both sides. max_len counts the
// eos, i.e. it bounds the positions a model sees on each side; a pair is kept when both sides
// have 1..max_len-1 text tokens. Skipped pairs are counted, not silently lost.
EncodedCorpus encode_corpus(const ParallelText& text, const Vocab& src_vocab, const Vocab& tgt_vocab, int max_len);

}  // namespace attn::data
