#pragma once
// A fixed number of threads that run posted jobs in their order of arrival: attn-serve's
// request handlers (--http-threads), which block until their sentences are decoded, so they
// must not run on the HTTP transport's io thread.
//
//   WorkerPool workers(4);
//   workers.post([] { ... });   // from any thread
//   // ~WorkerPool: runs the jobs already posted, then joins
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace attn::serve {

class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // `job` must not throw.
  void post(std::function<void()> job);

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool closing_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace attn::serve
