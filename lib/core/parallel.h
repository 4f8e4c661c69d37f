#pragma once
// attn's own worker threads: every parallel loop of a training or decoding step runs on them,
// and oneDNN runs single-threaded inside them (ops::gemm hands each thread whole row blocks).
//
// Why not OpenMP's team: a team splits a loop statically and closes it with a barrier that every
// thread must reach, so when another program takes a core and one thread is descheduled, every
// loop of the step waits for it. Here a loop is cut into more pieces than threads, a thread takes
// the next piece when it is free, and the caller waits only for pieces already taken: a thread
// that is descheduled, or never woke, costs the piece it holds, not its share of every loop.
// A caller waiting for pieces spins; an idle worker spins, then yields its core, then sleeps
// (parallel.cpp says why; docs/performance.md, "Sharing the CPU", has the figures).
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace attn {

// When a loop is worth cutting: only above this many elements of work does handing pieces to
// other threads save more than it costs (a hand-out is a microsecond or two).
constexpr int64_t kParallelWork = 32768;

// The same decision for a pass over a whole buffer that does a few operations per element it
// reads or writes (zeroing the gradients, quantising or rescaling rows, the initialisers'
// fills): such a pass waits on memory more than on arithmetic, so more threads shorten it less
// than they do kParallelWork's loops, and it needs twice the elements before a hand-out pays.
constexpr int64_t kParallelPass = 2 * kParallelWork;

// The threads every parallel loop uses, the calling thread included (1: everything runs on the
// caller; 0, the default: OMP_NUM_THREADS when it is set, else one per core). Set it before loops
// run on other threads.
void set_parallel_threads(int threads);
int parallel_threads();
// True on a worker thread, and on the caller while it runs a piece: a loop started there runs
// inline (no nesting).
bool in_parallel_piece();
// Loops handed to the threads since the process started (loops run inline are not counted): what
// a step costs in hand-outs.
uint64_t parallel_loops_started();

// A callable by reference, for the one non-template entry point.
class PieceFunction {
 public:
  template <class F>
  PieceFunction(F& f) : object_(&f), call_([](void* o, int64_t piece) { (*static_cast<F*>(o))(piece); }) {}
  void operator()(int64_t piece) const { call_(object_, piece); }

 private:
  void* object_;
  void (*call_)(void*, int64_t);
};

// Runs run_piece(p) once for every p in [0, pieces), spread over the threads, and returns when
// all have run. The first exception a piece throws is rethrown here (the rest still run).
void run_pieces(int64_t pieces, PieceFunction run_piece);

// How many pieces a loop of `count` items costing `item_work` each is cut into: 1 when the
// work is below `threshold` or there is one thread, else enough pieces that a descheduled
// thread holds little of it, each still worth a hand-out.
int64_t piece_count(int64_t count, int64_t item_work, int64_t threshold = kParallelWork);

// Piece p of `pieces` over [0, count): [count p / pieces, count (p + 1) / pieces).
inline int64_t piece_begin(int64_t count, int64_t pieces, int64_t piece) { return count * piece / pieces; }

// Calls body(first, last) on consecutive ranges that together cover [0, count) exactly once, in
// parallel when the loop's work (count x item_work) is above `threshold`.
template <class Body>
void parallel_for(int64_t count, int64_t item_work, int64_t threshold, Body&& body) {
  if (count <= 0) return;
  const int64_t pieces = piece_count(count, item_work, threshold);
  if (pieces <= 1) {
    body(int64_t(0), count);
    return;
  }
  auto run = [&](int64_t piece) { body(piece_begin(count, pieces, piece), piece_begin(count, pieces, piece + 1)); };
  run_pieces(pieces, PieceFunction(run));
}

template <class Body>
void parallel_for(int64_t count, int64_t item_work, Body&& body) {
  parallel_for(count, item_work, kParallelWork, std::forward<Body>(body));
}

// The sum of body(first, last) over the ranges of parallel_for, added in the ranges' order: the
// same for every thread count's timing (the ranges depend on count and the thread count only).
template <class T, class Body>
T parallel_sum(int64_t count, int64_t item_work, int64_t threshold, Body&& body) {
  if (count <= 0) return T{};
  const int64_t pieces = piece_count(count, item_work, threshold);
  if (pieces <= 1) return body(int64_t(0), count);
  std::vector<T> partial(size_t(pieces), T{});
  auto run = [&](int64_t piece) {
    partial[size_t(piece)] = body(piece_begin(count, pieces, piece), piece_begin(count, pieces, piece + 1));
  };
  run_pieces(pieces, PieceFunction(run));
  T sum{};
  for (const T& value : partial) sum += value;
  return sum;
}

}  // namespace attn
