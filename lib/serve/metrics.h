#pragma once
// attn-serve's GET /metrics, in Prometheus' text format (version 0.0.4): requests by endpoint
// and status, request latency, batch sizes, queue depth, sentences and tokens translated,
// sentences dropped (their client left, or their time ran out), connections open, timed out
// and refused.
// Thread-safe: the HTTP io thread and workers record requests and connections, the decoding
// thread records batches.
//
// A label's value never comes from a client: the endpoint label is one of the routes the
// server registered (add_endpoint) or "other", so a scrape stays valid UTF-8 with a bounded
// number of series whatever paths clients send, and every value is escaped as the text format
// requires (prometheus_label_value).
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
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

// Where a connection was when its deadline passed: waiting for a request (no byte of it came:
// --header-timeout), within its head (--header-timeout) or its body (--body-timeout).
enum class RequestPhase { idle, head, body };

// `text` as a label value of Prometheus' text format: backslash, double quote and line feed
// escaped (\\, \", \n).
std::string prometheus_label_value(const std::string& text);

class Metrics : public QueueObserver {
 public:
  // The label of requests to no registered endpoint.
  static constexpr const char* kOtherEndpoint = "other";

  Metrics();
  // A route the server answers: requests to it are counted under its own label.
  void add_endpoint(const std::string& endpoint);
  // `path`: the request's; one that is not a registered route counts as "other".
  void request_done(const std::string& path, int status, double seconds);
  // The client connections open now.
  void set_open_connections(int64_t open);
  // A connection closed because its request missed its deadline in `phase`.
  void connection_timed_out(RequestPhase phase);
  // A connection refused (503) because --max-connections were open.
  void connection_refused();
  void batch_decoded(int sentences, int64_t source_tokens, int64_t target_tokens) override;
  void sentences_dropped(DropReason reason, int64_t sentences) override;
  std::string prometheus_text(int64_t queue_depth) const;

 private:
  mutable std::mutex mutex_;
  std::set<std::string> endpoints_;
  std::map<std::pair<std::string, int>, int64_t> requests_;  // (endpoint, status) -> count
  Histogram latency_, batch_sizes_;
  int64_t sentences_ = 0, source_tokens_ = 0, target_tokens_ = 0;
  int64_t dropped_client_gone_ = 0, dropped_timeout_ = 0;
  int64_t open_connections_ = 0, connections_refused_ = 0;
  int64_t timed_out_[3] = {0, 0, 0};  // by RequestPhase
};

}  // namespace attn::serve
