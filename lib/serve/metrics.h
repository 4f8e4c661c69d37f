#pragma once
// attn-serve's GET /metrics, in Prometheus' text format (version 0.0.4): requests by endpoint
// and status, request latency, batch sizes, queue depth, sentences and tokens translated,
// sentences dropped (their client left, or their time ran out).
// Thread-safe: HTTP threads record requests, the decoding thread records batches.
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "serve/sentence_queue.h"

namespace attn::serve {

// Cumulative buckets, as Prometheus histograms are: counts[i] = observations <= bounds[i].
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double value);
  // NAME_bucket{le="..."}, NAME_sum and NAME_count lines, under HELP and TYPE.
  void write(std::string& out, const std::string& name, const std::string& help) const;
  int64_t count() const { return count_; }

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_;  // per bucket, not yet cumulative; the last is +Inf
  double sum_ = 0;
  int64_t count_ = 0;
};

class Metrics : public QueueObserver {
 public:
  Metrics();
  void request_done(const std::string& endpoint, int status, double seconds);
  void batch_decoded(int sentences, int64_t source_tokens, int64_t target_tokens) override;
  void sentences_dropped(DropReason reason, int64_t sentences) override;
  std::string prometheus_text(int64_t queue_depth) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, int64_t> requests_;  // (endpoint, status) -> count
  Histogram latency_, batch_sizes_;
  int64_t sentences_ = 0, source_tokens_ = 0, target_tokens_ = 0;
  int64_t dropped_client_gone_ = 0, dropped_timeout_ = 0;
};

}  // namespace attn::serve
