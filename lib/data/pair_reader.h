#pragma once
// PairReader: the sentence pairs of two aligned text files, read line by line from given byte
// offsets, in memory bounded by a read buffer and the longest line (never the file).
//
// Lines follow read_lines (corpus.h): split on "\n", a trailing "\r" dropped, a last line
// without "\n" still counts. A position is plain byte offsets, so a checkpoint can store it and
// a reader opened at it continues exactly there.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace attn::data {

struct PairReaderPosition {
  int64_t src_offset = 0, tgt_offset = 0;  // bytes from the start of each file
  int64_t line = 0;                        // lines read before this position (0-based index of the next)
  int64_t links_offset = 0;                // in the alignments file, when the reader has one

  bool operator==(const PairReaderPosition& other) const {
    return src_offset == other.src_offset && tgt_offset == other.tgt_offset && line == other.line &&
           links_offset == other.links_offset;
  }
};

class PairReader {
 public:
  // Opens both files at `start`; throws naming the file when one cannot be opened, or when an
  // offset lies beyond its end (the file changed since the position was taken). With
  // `links_path`, a third file (the pairs' alignments, one line each) is read in lockstep.
  PairReader(const std::string& src_path, const std::string& tgt_path, PairReaderPosition start = {},
             const std::string& links_path = "");
  ~PairReader();
  PairReader(PairReader&&) noexcept;
  PairReader& operator=(PairReader&&) noexcept;

  // The next pair; false when both files are at their end. When one file ends before the
  // other, throws attn::Error naming both files and the line where the shorter one ended.
  // `links` gets the alignments file's line (empty without one).
  bool next(std::string& src, std::string& tgt, std::string* links = nullptr);
  // Whether no pair is left (same alignment check as next).
  bool at_end();

  PairReaderPosition position() const { return position_; }

 private:
  class File;
  bool check_ends_together(bool src_ended, bool tgt_ended, bool links_ended) const;

  std::unique_ptr<File> src_, tgt_, links_;
  PairReaderPosition position_;
};

}  // namespace attn::data
