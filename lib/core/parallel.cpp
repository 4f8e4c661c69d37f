#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <exception>
#include <linux/futex.h>
#include <memory>
#include <mutex>
#include <sched.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

#include "core/check.h"

namespace attn {

namespace {

// How a thread waits, chosen by measuring training beside a busy process at nice 0 and nice 10
// (docs/performance.md, "Sharing the CPU"). Spinning keeps a thread's place on its core: a
// thread that yields or sleeps hands a competitor its turn, and the scheduler may let the
// competitor finish a whole slice before the thread runs again. So the caller, the step's
// critical path, spins for as long as any piece can take before it sleeps; an idle worker spins
// through the short gaps between a step's loops, then yields its core to whatever else is
// runnable there (at nice 0 a competitor then runs while the worker has nothing to do rather
// than when it has), then sleeps.
struct WaitTimes {
  std::chrono::microseconds spin, yield;
};
constexpr WaitTimes kCallerWait{std::chrono::microseconds(5000), std::chrono::microseconds(0)};
constexpr WaitTimes kIdleWait{std::chrono::microseconds(1000), std::chrono::microseconds(4000)};

// Pieces are claimed from one 64-bit word: [job:32][next piece:16][pieces:16]. A claim is a
// compare-and-swap on the whole word, so a thread that read an older job's word can never take a
// piece of the next one.
constexpr int64_t kMaxPieces = 0xffff;
constexpr uint64_t kNextUnit = uint64_t(1) << 16;
uint64_t next_of(uint64_t word) { return (word >> 16) & 0xffff; }
uint64_t total_of(uint64_t word) { return word & 0xffff; }

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

void futex_wait(std::atomic<uint32_t>& word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futex_wake(std::atomic<uint32_t>& word, int count) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

// Waits until ready() holds: spins, then yields, then sleeps on `word` while it equals what
// ready() last saw (sleepers counts the sleeping threads so that the waker calls the kernel only
// when someone sleeps).
template <class Ready>
void wait_until(Ready&& ready, std::atomic<uint32_t>& word, std::atomic<int>& sleepers, const WaitTimes& times) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (int spin = 0;; ++spin) {
    if (ready()) return;
    cpu_relax();
    if ((spin & 63) == 63 && Clock::now() - start > times.spin) break;
  }
  while (Clock::now() - start < times.spin + times.yield) {
    if (ready()) return;
    sched_yield();
  }
  for (;;) {
    const uint32_t seen = word.load();
    if (ready()) return;
    sleepers.fetch_add(1);
    if (!ready()) futex_wait(word, seen);
    sleepers.fetch_sub(1);
  }
}

thread_local bool running_piece = false;
std::atomic<uint64_t> loops_started{0};

class Pool {
 public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    stop_.store(true);
    posted_.fetch_add(1);
    futex_wake(posted_, INT_MAX);
    for (std::thread& worker : workers_) worker.join();
  }
  int threads() const { return int(workers_.size()) + 1; }

  // Called with `caller_` held.
  void run(int64_t pieces, PieceFunction run_piece) {
    task_.store(&run_piece, std::memory_order_relaxed);
    failure_ = nullptr;
    done_.store(0, std::memory_order_relaxed);
    job_ += 1;
    claim_.store((uint64_t(job_) << 32) | uint64_t(pieces), std::memory_order_release);
    posted_.fetch_add(1);
    if (idle_sleepers_.load() > 0) futex_wake(posted_, INT_MAX);
    running_piece = true;
    while (take_piece()) {
    }
    wait_until([&] { return done_.load(std::memory_order_acquire) == uint32_t(pieces); }, done_, caller_sleeps_,
               kCallerWait);
    running_piece = false;
    task_.store(nullptr, std::memory_order_relaxed);
    if (failure_) std::rethrow_exception(failure_);
  }

  std::mutex caller_;  // one loop at a time; a second caller runs its loop inline

 private:
  // Claims and runs one piece of the current job; false when none is left.
  bool take_piece() {
    uint64_t word = claim_.load(std::memory_order_acquire);
    for (;;) {
      const uint64_t total = total_of(word);
      if (next_of(word) >= total) return false;
      if (claim_.compare_exchange_weak(word, word + kNextUnit, std::memory_order_acq_rel)) {
        // The job cannot end before this piece does, so its task is still the one posted with it.
        run_one(*task_.load(std::memory_order_relaxed), int64_t(next_of(word)), total);
        return true;
      }
    }
  }

  void run_one(const PieceFunction& run_piece, int64_t piece, uint64_t total) {
    try {
      run_piece(piece);
    } catch (...) {
      std::lock_guard<std::mutex> lock(failure_mutex_);
      if (!failure_) failure_ = std::current_exception();
    }
    if (done_.fetch_add(1, std::memory_order_acq_rel) + 1 == total && caller_sleeps_.load() > 0) futex_wake(done_, 1);
  }

  bool has_piece() const {
    const uint64_t word = claim_.load(std::memory_order_acquire);
    return next_of(word) < total_of(word);
  }

  void work() {
    running_piece = true;  // a loop inside a piece runs inline
    while (!stop_.load(std::memory_order_relaxed)) {
      if (take_piece()) continue;
      const uint32_t seen = posted_.load();
      wait_until([&] { return has_piece() || stop_.load(std::memory_order_relaxed) || posted_.load() != seen; },
                 posted_, idle_sleepers_, kIdleWait);
    }
  }

  std::vector<std::thread> workers_;
  std::atomic<uint64_t> claim_{0};
  std::atomic<const PieceFunction*> task_{nullptr};
  std::atomic<uint32_t> posted_{0};  // bumped for every job: the idle workers' futex word
  std::atomic<uint32_t> done_{0};    // pieces of the current job finished: the caller's futex word
  std::atomic<int> idle_sleepers_{0};
  std::atomic<int> caller_sleeps_{0};
  std::atomic<bool> stop_{false};
  uint32_t job_ = 0;
  std::mutex failure_mutex_;
  std::exception_ptr failure_;
};

// One thread a core, or OMP_NUM_THREADS when it is set: job schedulers and test runners that share
// a machine set it, and it bounds attn's threads as it bounds every OpenMP program's.
int default_threads() {
  if (const char* text = std::getenv("OMP_NUM_THREADS")) {
    char* end = nullptr;
    const long threads = std::strtol(text, &end, 10);
    if (end != text && threads > 0 && threads <= 4096) return int(threads);
  }
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 0 ? int(cores) : 1;
}

std::mutex pool_mutex;  // guards `pool` itself (its replacement), not its use
std::unique_ptr<Pool> pool;
int wanted_threads = 0;  // 0: not set yet

Pool* current_pool() {
  std::lock_guard<std::mutex> lock(pool_mutex);
  if (wanted_threads == 0) wanted_threads = default_threads();
  if (!pool || pool->threads() != wanted_threads) {
    pool.reset();
    if (wanted_threads > 1) pool = std::make_unique<Pool>(wanted_threads);
  }
  return pool.get();
}

}  // namespace

void set_parallel_threads(int threads) {
  ATTN_CHECK(threads >= 0, "thread count must be at least 1 (0: one per core), got ", threads);
  std::lock_guard<std::mutex> lock(pool_mutex);
  wanted_threads = threads > 0 ? threads : default_threads();
}

int parallel_threads() {
  std::lock_guard<std::mutex> lock(pool_mutex);
  return wanted_threads == 0 ? default_threads() : wanted_threads;
}

bool in_parallel_piece() { return running_piece; }

int64_t piece_count(int64_t count, int64_t item_work, int64_t threshold) {
  if (running_piece || count <= 1) return 1;
  const int64_t work = count * std::max<int64_t>(item_work, 1);
  if (work <= threshold) return 1;
  const int64_t threads = parallel_threads();
  if (threads <= 1) return 1;
  // Four pieces a thread: a thread that stops holds a quarter of its share, and each piece
  // still carries at least half the work that pays for a hand-out.
  const int64_t most = std::min<int64_t>(4 * threads, std::max<int64_t>(threads, 2 * work / threshold));
  return std::min(count, most);
}

void run_pieces(int64_t pieces, PieceFunction run_piece) {
  ATTN_CHECK(pieces >= 0 && pieces <= kMaxPieces, "run_pieces: ", pieces, " pieces (at most ", kMaxPieces, ")");
  Pool* workers = running_piece || pieces <= 1 ? nullptr : current_pool();
  std::unique_lock<std::mutex> lock;
  if (workers) lock = std::unique_lock<std::mutex>(workers->caller_, std::try_to_lock);
  if (!workers || !lock.owns_lock()) {
    for (int64_t piece = 0; piece < pieces; ++piece) run_piece(piece);
    return;
  }
  loops_started.fetch_add(1, std::memory_order_relaxed);
  workers->run(pieces, run_piece);
}

uint64_t parallel_loops_started() { return loops_started.load(std::memory_order_relaxed); }

}  // namespace attn
