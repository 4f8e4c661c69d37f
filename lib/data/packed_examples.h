#pragma once
// PackedExamples: encoded sentence pairs stored compactly, for the training stream's windows.
//
// A std::vector<Example> costs two heap blocks and 56 bytes of headers per pair besides its
// ids. Here every id is a LEB128 varint in one byte array (ids below 128 take one byte, below
// 16,384 two: every id of an 8k or 16k vocabulary; a pair's alignment links follow its ids the
// same way), with a 32-byte entry per pair, so a window
// of a million 30-token pairs takes ~150 MB instead of ~350 MB. Pairs are unpacked one batch at
// a time.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "data/corpus.h"

namespace attn::data {

class PackedExamples {
 public:
  void add(const Example& example);
  // Room for `pairs` pairs like the ones added so far, so that filling a window does not
  // double its arrays on the way (and copy them: three times their size at the peak).
  void reserve_like_so_far(size_t pairs);
  void shrink_to_fit();

  size_t size() const { return entries_.size(); }
  // max(|src|, |tgt|) of pair i, eos included: what batches are cut by.
  int32_t length(size_t i) const { return std::max(entries_[i].src_length, entries_[i].tgt_length); }
  int32_t corpus(size_t i) const { return entries_[i].corpus; }
  Example unpack(size_t i) const;
  size_t bytes() const { return bytes_.capacity() + entries_.capacity() * sizeof(Entry); }

 private:
  struct Entry {
    int64_t offset;  // of the source ids in bytes_; the target ids follow them
    int64_t index;
    int32_t src_length, tgt_length;
    int32_t corpus;
    int32_t links;  // after the target ids, each link (source, target) as two varints
  };
  std::vector<uint8_t> bytes_;
  std::vector<Entry> entries_;
};

}  // namespace attn::data
