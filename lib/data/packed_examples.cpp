#include "data/packed_examples.h"

#include "core/check.h"

namespace attn::data {

namespace {

void put_varint(std::vector<uint8_t>& bytes, int32_t id) {
  auto value = static_cast<uint32_t>(id);
  while (value >= 0x80) {
    bytes.push_back(static_cast<uint8_t>(value | 0x80));
    value >>= 7;
  }
  bytes.push_back(static_cast<uint8_t>(value));
}

int32_t get_varint(const uint8_t*& p) {
  uint32_t value = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t byte = *p++;
    value |= uint32_t(byte & 0x7f) << shift;
    if (!(byte & 0x80)) return static_cast<int32_t>(value);
  }
}

void unpack_ids(const uint8_t*& p, int32_t count, std::vector<int32_t>& ids) {
  ids.resize(size_t(count));
  for (int32_t& id : ids) id = get_varint(p);
}

}  // namespace

void PackedExamples::add(const Example& example) {
  ATTN_CHECK(example.src.size() <= INT32_MAX && example.tgt.size() <= INT32_MAX, "PackedExamples: pair too long");
  ATTN_CHECK(example.links.size() <= INT32_MAX, "PackedExamples: too many links");
  entries_.push_back({static_cast<int64_t>(bytes_.size()), example.index, static_cast<int32_t>(example.src.size()),
                      static_cast<int32_t>(example.tgt.size()), example.corpus,
                      static_cast<int32_t>(example.links.size())});
  for (int32_t id : example.src) put_varint(bytes_, id);
  for (int32_t id : example.tgt) put_varint(bytes_, id);
  for (const PieceLink& link : example.links) {
    put_varint(bytes_, link.first);
    put_varint(bytes_, link.second);
  }
}

void PackedExamples::reserve_like_so_far(size_t pairs) {
  if (entries_.empty() || pairs <= entries_.size()) return;
  const double bytes_per_pair = double(bytes_.size()) / double(entries_.size());
  bytes_.reserve(size_t(bytes_per_pair * double(pairs) * 1.05));  // 5% for a longer tail
  entries_.reserve(pairs);
}

void PackedExamples::shrink_to_fit() {
  bytes_.shrink_to_fit();
  entries_.shrink_to_fit();
}

Example PackedExamples::unpack(size_t i) const {
  const Entry& entry = entries_[i];
  Example example;
  example.index = entry.index;
  example.corpus = entry.corpus;
  const uint8_t* p = bytes_.data() + entry.offset;
  unpack_ids(p, entry.src_length, example.src);
  unpack_ids(p, entry.tgt_length, example.tgt);
  example.links.resize(size_t(entry.links));
  for (PieceLink& link : example.links) {
    link.first = get_varint(p);
    link.second = get_varint(p);
  }
  return example;
}

}  // namespace attn::data
