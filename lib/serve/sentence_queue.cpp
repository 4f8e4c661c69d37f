#include "serve/sentence_queue.h"

#include <algorithm>
#include <cstdlib>

#include "core/check.h"
#include "core/process_memory.h"

namespace attn::serve {

namespace {
constexpr std::chrono::seconds kIdleBeforeTrim{1};
}  // namespace

PendingRequest::PendingRequest(std::vector<std::string> sentences, int nbest,
                               std::optional<decode::AlignmentExtraction> alignment,
                               std::vector<std::optional<std::string>> prefixes)
    : sentences_(std::move(sentences)),
      encoded_(sentences_.size()),
      is_encoded_(sentences_.size(), 0),
      nbest_(nbest),
      alignment_(alignment),
      prefixes_(std::move(prefixes)),
      results_(sentences_.size()),
      remaining_(sentences_.size()) {
  ATTN_CHECK(prefixes_.empty() || prefixes_.size() == sentences_.size(), "submit: ", prefixes_.size(), " prefixes for ",
             sentences_.size(), " sentences");
}

void PendingRequest::cancel(DropReason reason) {
  if (cancelled_) return;
  drop_reason_ = reason;
  cancelled_ = true;
}

void PendingRequest::set(size_t index, SentenceResult result) {
  const std::lock_guard<std::mutex> lock(mutex_);
  results_[index] = std::move(result);
  if (--remaining_ == 0) done_.notify_all();
}

void PendingRequest::fail(std::exception_ptr error) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!error_) error_ = error;
  done_.notify_all();
}

bool PendingRequest::wait_for(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  return done_.wait_for(lock, timeout, [&] { return remaining_ == 0 || error_; });
}

std::vector<SentenceResult> PendingRequest::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return remaining_ == 0 || error_; });
  if (error_) std::rethrow_exception(error_);
  return std::move(results_);
}

SentenceQueue::SentenceQueue(QueueOptions options, BatchBackend& backend, QueueObserver* observer)
    : options_(options), backend_(backend), observer_(observer) {
  options_.batch_size = std::max(1, options_.batch_size);
  options_.window = std::max(options_.window, options_.batch_size);
  thread_ = std::thread([this] { run(); });
}

SentenceQueue::~SentenceQueue() { close(); }

std::shared_ptr<PendingRequest> SentenceQueue::submit(std::vector<std::string> sentences, int nbest,
                                                      std::optional<decode::AlignmentExtraction> alignment,
                                                      std::vector<std::optional<std::string>> prefixes) {
  auto request = std::make_shared<PendingRequest>(std::move(sentences), nbest, alignment, std::move(prefixes));
  const size_t count = request->sentences_.size();
  if (count == 0) return request;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) throw QueueFull("the server is shutting down");
    if (int64_t(waiting_.size() + count) > options_.max_queue)
      throw QueueFull("the queue is full (" + std::to_string(waiting_.size()) + " sentences waiting, at most " +
                      std::to_string(options_.max_queue) + ")");
    const auto now = std::chrono::steady_clock::now();
    for (size_t i = 0; i < count; ++i) waiting_.push_back(Entry{request, i, now});
  }
  arrived_.notify_one();
  return request;
}

std::future<void> SentenceQueue::run_task(std::function<void()> work) {
  std::packaged_task<void()> task(std::move(work));
  std::future<void> done = task.get_future();
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) throw QueueFull("the server is shutting down");
    tasks_.push_back(std::move(task));
  }
  arrived_.notify_one();
  return done;
}

int64_t SentenceQueue::depth() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return int64_t(waiting_.size());
}

void SentenceQueue::close() {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
  }
  arrived_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SentenceQueue::run() {
  backend_.start_thread();
  std::unique_lock<std::mutex> lock(mutex_);
  bool decoded_since_trim = false;
  while (true) {
    const auto work = [&] { return closed_ || !waiting_.empty() || !tasks_.empty(); };
    // Idle for a second after decoding: what the batches freed goes back to the kernel, so a
    // server's RSS over days follows its current work, not the longest batch it ever decoded
    // (core/process_memory.h). Not after every batch: under load the queue empties at each
    // one, and a trim walks every allocator arena (one per HTTP thread, up to glibc's limit).
    if (decoded_since_trim && !arrived_.wait_for(lock, kIdleBeforeTrim, work)) {
      lock.unlock();
      release_free_memory();
      lock.lock();
      decoded_since_trim = false;
      continue;
    }
    arrived_.wait(lock, work);
    if (!tasks_.empty()) {  // a task goes before the next batch: it waits at most one batch
      std::packaged_task<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
      decoded_since_trim = true;
      continue;
    }
    if (waiting_.empty()) return;  // closed, and everything decoded
    // A full batch, or as many as came before the oldest has waited max_wait.
    const auto deadline = waiting_.front().arrived + options_.max_wait;
    arrived_.wait_until(lock, deadline, [&] { return closed_ || int64_t(waiting_.size()) >= options_.batch_size; });
    std::vector<Entry> batch = next_batch(lock);
    if (batch.empty()) continue;
    lock.unlock();
    decode(batch);
    lock.lock();
    decoded_since_trim = true;
  }
}

// With the lock held: the waiting sentences of cancelled requests leave, counted by reason.
void SentenceQueue::drop_cancelled() {
  int64_t dropped[2] = {0, 0};
  size_t kept = 0;
  for (Entry& entry : waiting_) {
    if (entry.request->cancelled())
      ++dropped[int(entry.request->drop_reason_.load())];
    else
      waiting_[kept++] = std::move(entry);
  }
  waiting_.erase(waiting_.begin() + std::ptrdiff_t(kept), waiting_.end());
  for (const DropReason reason : {DropReason::client_gone, DropReason::timeout})
    if (observer_ && dropped[int(reason)] > 0) observer_->sentences_dropped(reason, dropped[int(reason)]);
}

// Called and returning with the lock held; encodes outside it. Only this thread removes
// entries, and submit() only appends, so the window's positions stay put while unlocked.
std::vector<SentenceQueue::Entry> SentenceQueue::next_batch(std::unique_lock<std::mutex>& lock) {
  drop_cancelled();
  const size_t size = std::min(waiting_.size(), size_t(options_.window));
  std::vector<Entry> window(waiting_.begin(), waiting_.begin() + std::ptrdiff_t(size));
  lock.unlock();

  std::vector<std::string> texts;
  std::vector<size_t> to_encode;
  for (size_t i = 0; i < window.size(); ++i)
    if (!window[i].request->is_encoded_[window[i].index]) {
      to_encode.push_back(i);
      texts.push_back(window[i].request->sentences_[window[i].index]);
    }
  std::vector<char> take(window.size(), 0);
  std::vector<Entry> batch;
  try {
    std::vector<std::vector<int32_t>> encoded = backend_.encode(texts);
    for (size_t k = 0; k < to_encode.size(); ++k) {
      const Entry& entry = window[to_encode[k]];
      entry.request->encoded_[entry.index] = std::move(encoded[k]);
      entry.request->is_encoded_[entry.index] = 1;
    }
    const auto& ids = [&](const Entry& e) -> const std::vector<int32_t>& { return e.request->encoded_[e.index]; };
    // A sentence of no token is answered at once: there is nothing to decode.
    std::vector<size_t> candidates;
    for (size_t i = 0; i < window.size(); ++i) {
      if (ids(window[i]).empty()) {
        take[i] = 1;
        window[i].request->set(window[i].index, SentenceResult{});
      } else {
        candidates.push_back(i);
      }
    }
    if (!candidates.empty()) {
      const Entry& oldest = window[candidates.front()];
      const int nbest = oldest.request->nbest_;
      const auto length = [&](size_t i) { return int64_t(ids(window[i]).size()); };
      const int64_t target = length(candidates.front());
      std::vector<size_t> same;
      for (size_t i : candidates)
        if (window[i].request->nbest_ == nbest) same.push_back(i);
      std::stable_sort(same.begin(), same.end(), [&](size_t a, size_t b) {
        return std::llabs(length(a) - target) < std::llabs(length(b) - target);
      });
      same.resize(std::min(same.size(), size_t(options_.batch_size)));
      std::sort(same.begin(), same.end());  // arrival order within the batch
      for (size_t i : same) {
        take[i] = 1;
        batch.push_back(window[i]);
      }
    }
  } catch (...) {
    const std::exception_ptr error = std::current_exception();
    for (size_t i = 0; i < window.size(); ++i) {
      take[i] = 1;
      window[i].request->fail(error);
    }
    batch.clear();
  }

  lock.lock();
  size_t kept = 0;
  for (size_t i = 0; i < window.size(); ++i)
    if (!take[i]) waiting_[kept++] = std::move(waiting_[i]);
  waiting_.erase(waiting_.begin() + std::ptrdiff_t(kept), waiting_.begin() + std::ptrdiff_t(window.size()));
  return batch;
}

void SentenceQueue::decode(std::vector<Entry>& batch) {
  std::vector<const std::vector<int32_t>*> sentences;
  std::vector<std::optional<decode::AlignmentExtraction>> alignments;
  std::vector<std::optional<std::string>> prefixes;
  int64_t source_tokens = 0;
  for (const Entry& entry : batch) {
    sentences.push_back(&entry.request->encoded_[entry.index]);
    alignments.push_back(entry.request->alignment_);
    const auto& own = entry.request->prefixes_;
    prefixes.push_back(own.empty() ? std::nullopt : own[entry.index]);
    source_tokens += int64_t(sentences.back()->size());
  }
  try {
    std::vector<SentenceResult> results =
        backend_.decode(sentences, batch.front().request->nbest_, alignments, prefixes);
    int64_t target_tokens = 0;
    for (const SentenceResult& result : results)
      if (!result.hypotheses.empty()) target_tokens += int64_t(result.hypotheses.front().tokens.size());
    // Counted before the answers go out: a client that reads /metrics after its answer sees its batch.
    if (observer_) observer_->batch_decoded(int(batch.size()), source_tokens, target_tokens);
    for (size_t i = 0; i < batch.size(); ++i) {
      results[i].source_tokens = int64_t(sentences[i]->size());
      batch[i].request->set(batch[i].index, std::move(results[i]));
    }
  } catch (...) {
    for (Entry& entry : batch) entry.request->fail(std::current_exception());
  }
}

}  // namespace attn::serve
