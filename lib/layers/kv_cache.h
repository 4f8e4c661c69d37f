#pragma once
// KvCache: the keys and values an attention layer has already computed during incremental
// decoding, so step t attends over steps 0..t without recomputing the prefix. For
// self-attention it grows by one step per call; for cross-attention it holds the projected
// encoder output, computed once per sentence. Beam search reorders its rows.
//
// Self-attention's cache keeps each step's keys and values as the step made them, one
// (R_t, H, 1, Dh) tensor each, and for every row of the cache the row of each step it reads
// (its lineage). A reorder (select_rows) rewrites only those row numbers, and an append adds a
// tensor: no step moves a key once written. A cache in (B, H, T, Dh) tensors had to gather every
// kept row at each beam step, the whole cache of every layer, and kept a second storage to
// gather into (docs/performance.md, "where a beam step goes").
//
// Cross-attention's cache is the memory: (B, H, S, Dh) keys and values, and a row map from the
// cache's rows to the B source rows, so its B rows serve every beam of their sentence and a
// reorder copies nothing.
#include <optional>
#include <vector>

#include "core/tensor.h"
#include "ops/attention.h"

namespace attn::layers {

class KvCache {
 public:
  // An empty self-attention cache.
  KvCache() = default;
  // A full cache: cross-attention's projected memory, keys and values (B, H, S, Dh).
  KvCache(Tensor keys, Tensor values);
  KvCache(KvCache&&) = default;
  KvCache& operator=(KvCache&&) = default;
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  bool empty() const { return steps() == 0; }
  int64_t steps() const;
  // The keys and values as ops::attention_step reads them.
  ops::KeyValues entries() const;
  // The cache as contiguous (R, H, steps, Dh) tensors: the memory itself when not reordered,
  // else gathered copies.
  Tensor keys() const;
  Tensor values() const;

  // Appends one decoding step's keys and values (R, H, 1, Dh), f32, along the time axis, R the
  // cache's rows after the last reorder. Keeps the tensors: their storage is not to be written
  // again. Self-attention caches only.
  void append(Tensor step_keys, Tensor step_values);
  // Keeps rows `rows` (with repeats) of the cache's rows: beam search's reorder. Copies no key.
  void select_rows(const std::vector<int64_t>& rows);

 private:
  bool is_memory() const { return memory_keys_.defined(); }
  int64_t rows() const;
  Tensor gathered_cache(bool keys) const;  // keys() or values() as a copy

  // Self-attention: step t's keys and values (R_t, H, 1, Dh), and row r's lineage: the row of
  // step t it reads is step_rows_[t * rows() + r].
  std::vector<Tensor> step_keys_, step_values_;
  std::vector<int32_t> step_rows_;
  // Cross-attention: the memory (B, H, S, Dh) and the stored row each row reads (none: row r
  // reads row r).
  Tensor memory_keys_, memory_values_;
  std::optional<std::vector<int64_t>> row_map_;
};

}  // namespace attn::layers
