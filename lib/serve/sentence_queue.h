#pragma once
// Batching across requests: every request's sentences go into one queue, and one decoding
// thread takes them a batch at a time, so sentences of different connections share a batch and
// the model's weights exist once.
//
// A batch: the oldest waiting sentence, plus up to batch_size - 1 others of the same n-best
// size from the first `window` waiting, those closest to it in length (so batches are dense and
// no sentence starves). The thread waits up to max_wait from the oldest sentence's arrival for
// a full batch; a lone request is answered after that wait. Results go back to each request in
// its own order.
//
//   SentenceQueue queue(options, backend);
//   auto request = queue.submit({"Hello.", "How are you?"}, nbest);   // throws QueueFull
//   std::vector<SentenceResult> results = request->wait();            // in submit order
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "align/links.h"
#include "decode/alignment_extraction.h"
#include "decode/search.h"

namespace attn::serve {

// One sentence's translation: its hypotheses (best first) and their detokenized texts. Both
// empty for a sentence that encodes to nothing.
struct SentenceResult {
  std::vector<decode::Hypothesis> hypotheses;
  std::vector<std::string> texts;
  std::vector<align::Links> alignments;  // per hypothesis, when its request asked for them
  int64_t source_tokens = 0;             // eos included
};

// What the queue's thread runs: the model behind an interface, so the queue is tested alone.
class BatchBackend {
 public:
  virtual ~BatchBackend() = default;
  // Called once, on the decoding thread, before its first batch (the thread count).
  virtual void start_thread() {}
  // Token ids (eos last) of each text; empty for a text with no token.
  virtual std::vector<std::vector<int32_t>> encode(const std::vector<std::string>& texts) = 0;
  // One batch of non-empty encoded sentences (at most batch_size) -> their results, in order;
  // sentence i's hypotheses with their links under alignments[i] when it is set, and starting
  // with the target prefix prefixes[i] when it is set (otherwise the backend's own, if any).
  virtual std::vector<SentenceResult> decode(const std::vector<const std::vector<int32_t>*>& sentences, int nbest,
                                             const std::vector<std::optional<decode::AlignmentExtraction>>& alignments,
                                             const std::vector<std::optional<std::string>>& prefixes) = 0;
};

struct QueueOptions {
  int batch_size = 32;
  std::chrono::milliseconds max_wait{5};
  int64_t max_queue = 10000;  // sentences waiting at most; a request that would go past is refused
  int window = 256;           // waiting sentences a batch is picked from
};

// submit() with no room left: the caller answers 503 with Retry-After.
class QueueFull : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Why a request's waiting sentences were dropped (PendingRequest::cancel).
enum class DropReason { client_gone, timeout };

// Told of every batch and of every drop, on the decoding thread (the server's metrics).
struct QueueObserver {
  virtual ~QueueObserver() = default;
  virtual void batch_decoded(int sentences, int64_t source_tokens, int64_t target_tokens) = 0;
  virtual void sentences_dropped(DropReason, int64_t /*sentences*/) {}
};

class PendingRequest;

class SentenceQueue {
 public:
  SentenceQueue(QueueOptions options, BatchBackend& backend, QueueObserver* observer = nullptr);
  ~SentenceQueue();  // close()
  SentenceQueue(const SentenceQueue&) = delete;
  SentenceQueue& operator=(const SentenceQueue&) = delete;

  // Queues a request's sentences (all or none: QueueFull when they do not fit, or after close()),
  // their links wanted under `alignment` when it is set; `prefixes`: none, or one per sentence
  // (BatchBackend::decode's).
  std::shared_ptr<PendingRequest> submit(std::vector<std::string> sentences, int nbest,
                                         std::optional<decode::AlignmentExtraction> alignment = std::nullopt,
                                         std::vector<std::optional<std::string>> prefixes = {});
  // Runs `work` on the decoding thread, the one thread that runs the model, before the next
  // batch (tasks in submit order); the future holds what it threw. For work on the model besides
  // translation (attn-serve's attention maps). Throws QueueFull after close().
  std::future<void> run_task(std::function<void()> work);
  // Sentences waiting (not yet in a batch).
  int64_t depth() const;
  // Decodes everything queued, then stops the thread. Later submits throw QueueFull.
  void close();

 private:
  struct Entry {
    std::shared_ptr<PendingRequest> request;
    size_t index;  // in its request
    std::chrono::steady_clock::time_point arrived;
  };
  void run();
  void drop_cancelled();
  std::vector<Entry> next_batch(std::unique_lock<std::mutex>& lock);
  void decode(std::vector<Entry>& batch);

  QueueOptions options_;
  BatchBackend& backend_;
  QueueObserver* observer_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<Entry> waiting_;
  std::deque<std::packaged_task<void()>> tasks_;
  bool closed_ = false;
  std::thread thread_;
};

// A request's sentences in the queue. wait() returns their results in submit order, or
// rethrows the error that decoding one of them raised.
class PendingRequest {
 public:
  PendingRequest(std::vector<std::string> sentences, int nbest, std::optional<decode::AlignmentExtraction> alignment,
                 std::vector<std::optional<std::string>> prefixes = {});
  std::vector<SentenceResult> wait();
  // wait() with a deadline: false when it passed first.
  bool wait_for(std::chrono::milliseconds timeout);
  // Its sentences not yet in a batch are dropped (the client left, or its time ran out) when
  // the decoding thread next makes a batch; they are counted under `reason`. The first reason stays.
  void cancel(DropReason reason);
  bool cancelled() const { return cancelled_; }

 private:
  friend class SentenceQueue;
  void set(size_t index, SentenceResult result);
  void fail(std::exception_ptr error);

  std::vector<std::string> sentences_;
  std::vector<std::vector<int32_t>> encoded_;  // filled by the decoding thread
  std::vector<char> is_encoded_;
  int nbest_;
  std::optional<decode::AlignmentExtraction> alignment_;
  std::vector<std::optional<std::string>> prefixes_;  // per sentence, or empty: none
  std::atomic<bool> cancelled_{false};
  std::atomic<DropReason> drop_reason_{DropReason::client_gone};
  std::mutex mutex_;
  std::condition_variable done_;
  std::vector<SentenceResult> results_;
  size_t remaining_;
  std::exception_ptr error_;
};

}  // namespace attn::serve
