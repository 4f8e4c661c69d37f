#include "serve/metrics.h"

#include <algorithm>
#include <spdlog/fmt/fmt.h>

namespace attn::serve {

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double value) {
  const size_t bucket = size_t(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  ++counts_[bucket];
  sum_ += value;
  ++count_;
}

void Histogram::write(std::string& out, const std::string& name, const std::string& help) const {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  int64_t cumulative = 0;
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i];
    out += fmt::format("{}_bucket{{le=\"{:g}\"}} {}\n", name, bounds_[i], cumulative);
  }
  out += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {:g}\n{}_count {}\n", name, count_, name, sum_, name, count_);
}

Metrics::Metrics()
    : latency_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}),
      batch_sizes_({1, 2, 4, 8, 16, 32, 64, 128, 256}) {}

std::string prometheus_label_value(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

void Metrics::add_endpoint(const std::string& endpoint) {
  const std::lock_guard<std::mutex> lock(mutex_);
  endpoints_.insert(endpoint);
}

void Metrics::request_done(const std::string& path, int status, double seconds) {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++requests_[{endpoints_.count(path) ? path : std::string(kOtherEndpoint), status}];
  latency_.observe(seconds);
}

void Metrics::set_open_connections(int64_t open) {
  const std::lock_guard<std::mutex> lock(mutex_);
  open_connections_ = open;
}

void Metrics::connection_timed_out(RequestPhase phase) {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++timed_out_[int(phase)];
}

void Metrics::connection_refused() {
  const std::lock_guard<std::mutex> lock(mutex_);
  ++connections_refused_;
}

void Metrics::batch_decoded(int sentences, int64_t source_tokens, int64_t target_tokens) {
  const std::lock_guard<std::mutex> lock(mutex_);
  batch_sizes_.observe(sentences);
  sentences_ += sentences;
  source_tokens_ += source_tokens;
  target_tokens_ += target_tokens;
}

void Metrics::sentences_dropped(DropReason reason, int64_t sentences) {
  const std::lock_guard<std::mutex> lock(mutex_);
  (reason == DropReason::client_gone ? dropped_client_gone_ : dropped_timeout_) += sentences;
}

std::string Metrics::prometheus_text(int64_t queue_depth) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  out += "# HELP attn_http_requests_total HTTP requests answered, by endpoint and status.\n";
  out += "# TYPE attn_http_requests_total counter\n";
  for (const auto& [key, count] : requests_)
    out += fmt::format("attn_http_requests_total{{endpoint=\"{}\",status=\"{}\"}} {}\n",
                       prometheus_label_value(key.first), key.second, count);
  latency_.write(out, "attn_http_request_duration_seconds", "Time from a request's arrival to its answer.");
  batch_sizes_.write(out, "attn_batch_sentences", "Sentences per decoded batch.");
  out += "# HELP attn_queue_sentences Sentences waiting for a batch.\n# TYPE attn_queue_sentences gauge\n";
  out += fmt::format("attn_queue_sentences {}\n", queue_depth);
  const auto counter = [&](const char* name, const char* help, int64_t value) {
    out += fmt::format("# HELP {} {}\n# TYPE {} counter\n{} {}\n", name, help, name, name, value);
  };
  counter("attn_sentences_translated_total", "Sentences decoded.", sentences_);
  counter("attn_source_tokens_total", "Source tokens decoded (eos included).", source_tokens_);
  counter("attn_target_tokens_total", "Target tokens of the best translations.", target_tokens_);
  out +=
      "# HELP attn_sentences_dropped_total Sentences dropped before decoding: their client left, or their "
      "request ran past --request-timeout.\n# TYPE attn_sentences_dropped_total counter\n";
  out += fmt::format("attn_sentences_dropped_total{{reason=\"client_gone\"}} {}\n", dropped_client_gone_);
  out += fmt::format("attn_sentences_dropped_total{{reason=\"timeout\"}} {}\n", dropped_timeout_);
  out += "# HELP attn_http_connections Client connections open.\n# TYPE attn_http_connections gauge\n";
  out += fmt::format("attn_http_connections {}\n", open_connections_);
  out +=
      "# HELP attn_http_connections_timed_out_total Connections closed at a deadline: no request came (idle), "
      "its head was not in (head, --header-timeout) or its body (body, --body-timeout).\n"
      "# TYPE attn_http_connections_timed_out_total counter\n";
  const char* phases[] = {"idle", "head", "body"};
  for (int phase = 0; phase < 3; ++phase)
    out += fmt::format("attn_http_connections_timed_out_total{{phase=\"{}\"}} {}\n", phases[phase], timed_out_[phase]);
  counter("attn_http_connections_refused_total", "Connections refused (503) because --max-connections were open.",
          connections_refused_);
  return out;
}

}  // namespace attn::serve
