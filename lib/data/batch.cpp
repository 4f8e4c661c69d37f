#include "data/batch.h"

#include <algorithm>
#include <type_traits>

#include "core/check.h"

namespace attn::data {

int64_t pad_length(int64_t length, int64_t multiple) { return (length + multiple - 1) / multiple * multiple; }

namespace {

// Writes example into row b of the (pad-filled) blocks and adds its lengths and tokens.
void fill_row(Batch& batch, int64_t b, const Example& example) {
  std::copy(example.src.begin(), example.src.end(), batch.src.begin() + b * batch.src_len);
  std::copy(example.tgt.begin(), example.tgt.end(), batch.tgt_out.begin() + b * batch.tgt_len);
  // tgt_in = bos y1 .. y_{n-1}: tgt_out shifted right by one.
  auto in_row = batch.tgt_in.begin() + b * batch.tgt_len;
  *in_row = kBosId;
  std::copy(example.tgt.begin(), example.tgt.end() - 1, in_row + 1);
  batch.src_lengths.push_back(static_cast<int32_t>(example.src.size()));
  batch.tgt_lengths.push_back(static_cast<int32_t>(example.tgt.size()));
  batch.indices.push_back(example.index);
  batch.links.push_back(example.links);
  batch.src_tokens += static_cast<int64_t>(example.src.size());
  batch.tgt_tokens += static_cast<int64_t>(example.tgt.size());
}

}  // namespace

Batch make_batch(const std::vector<const Example*>& examples, int pad_multiple) {
  ATTN_CHECK(!examples.empty(), "make_batch: no examples");
  ATTN_CHECK(pad_multiple >= 1, "make_batch: pad_multiple ", pad_multiple, " must be at least 1");
  Batch batch;
  batch.size = static_cast<int64_t>(examples.size());
  int64_t max_src = 0, max_tgt = 0;
  for (const Example* example : examples) {
    ATTN_CHECK(!example->src.empty() && !example->tgt.empty(), "make_batch: example ", example->index,
               " has an empty side");
    max_src = std::max<int64_t>(max_src, example->src.size());
    max_tgt = std::max<int64_t>(max_tgt, example->tgt.size());
  }
  batch.src_len = pad_length(max_src, pad_multiple);
  batch.tgt_len = pad_length(max_tgt, pad_multiple);
  batch.src.assign(batch.size * batch.src_len, kPadId);
  batch.tgt_in.assign(batch.size * batch.tgt_len, kPadId);
  batch.tgt_out.assign(batch.size * batch.tgt_len, kPadId);
  for (int64_t b = 0; b < batch.size; ++b) fill_row(batch, b, *examples[b]);
  return batch;
}

int64_t linked_target_rows(const Batch& batch) {
  int64_t rows = 0;
  for (const PieceLinks& links : batch.links)  // ordered by target: count the distinct targets
    for (size_t i = 0; i < links.size(); ++i) rows += i == 0 || links[i].second != links[i - 1].second ? 1 : 0;
  return rows;
}

Batch shard(const Batch& batch, int rank, int world) {
  ATTN_CHECK(world >= 1 && rank >= 0 && rank < world, "shard: rank ", rank, " outside world of ", world);
  const int64_t base = batch.size / world, extra = batch.size % world;
  const int64_t begin = rank * base + std::min<int64_t>(rank, extra);
  const int64_t end = begin + base + (rank < extra ? 1 : 0);

  Batch part;
  part.size = end - begin;
  part.src_len = batch.src_len;
  part.tgt_len = batch.tgt_len;
  auto rows = [&](const auto& block, int64_t width) {
    return std::vector<typename std::decay_t<decltype(block)>::value_type>(block.begin() + begin * width,
                                                                           block.begin() + end * width);
  };
  part.src = rows(batch.src, batch.src_len);
  part.tgt_in = rows(batch.tgt_in, batch.tgt_len);
  part.tgt_out = rows(batch.tgt_out, batch.tgt_len);
  part.src_lengths = rows(batch.src_lengths, 1);
  part.tgt_lengths = rows(batch.tgt_lengths, 1);
  part.indices = rows(batch.indices, 1);
  part.links = rows(batch.links, 1);
  for (int64_t b = 0; b < part.size; ++b) {
    part.src_tokens += part.src_lengths[b];
    part.tgt_tokens += part.tgt_lengths[b];
  }
  return part;
}

}  // namespace attn::data
