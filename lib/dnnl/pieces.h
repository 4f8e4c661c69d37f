#pragma once
// A oneDNN primitive run in pieces on attn's threads (core/parallel.h). oneDNN runs
// single-threaded on every thread (dnnl/context.h), so an op over a large tensor cuts its
// leading axis into pieces, makes a primitive for a piece's shape and executes one per piece
// over that piece's part of the memory.
//
// Every primitive the pieces need is fetched from the calling thread's cache (each thread has
// its own) before they start, and a piece only executes: the workers build none of their own.
// piece_begin's pieces come in two lengths at most (count / pieces rounded down and up), so two
// entries serve them all. Pieces of one length execute one primitive on several threads at
// once, so such primitives are made in user scratchpad mode and execute with the executing
// thread's scratchpad (Context::scratchpad): in library mode a primitive owns one scratchpad,
// which every thread executing it would share.
#include <type_traits>
#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

#include "core/parallel.h"

namespace attn::dnn {

// The attributes of a primitive that may execute on any thread: user scratchpad mode.
dnnl::primitive_attr piece_attr();

// Executes `primitive` on the calling thread's stream, with the calling thread's scratchpad of
// `scratchpad`'s size when it needs one.
void execute(const dnnl::primitive& primitive, const dnnl::memory::desc& scratchpad,
             std::unordered_map<int, dnnl::memory> args);

// Cuts [0, count) of a leading axis into `pieces` (from piece_count) and calls
// run(entry(length), piece, first, last) for each piece [first, last) on attn's threads, where
// entry(length) is the cache entry for a piece of `length` items, fetched here on the calling
// thread for every length before any piece runs. One piece: run(entry(count), 0, 0, count)
// here.
template <class GetEntry, class Run>
void run_in_pieces(int64_t count, int64_t pieces, GetEntry&& entry, Run&& run) {
  if (pieces <= 1) {
    run(entry(count), int64_t(0), int64_t(0), count);
    return;
  }
  using Entry = std::remove_reference_t<decltype(entry(count))>;
  const int64_t shorter = count / pieces;  // >= 1: piece_count never makes more pieces than items
  Entry* entries[2] = {&entry(shorter), count % pieces != 0 ? &entry(shorter + 1) : nullptr};
  auto run_piece = [&](int64_t piece) {
    const int64_t first = piece_begin(count, pieces, piece), last = piece_begin(count, pieces, piece + 1);
    run(*entries[last - first - shorter], piece, first, last);
  };
  run_pieces(pieces, PieceFunction(run_piece));
}

}  // namespace attn::dnn
