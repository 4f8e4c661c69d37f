#pragma once
// Who may use attn-serve, and how often: API keys (--api-keys FILE) and a per-client rate
// limit (--rate-limit N requests per minute, per API key, or per IP address without one).
#include <chrono>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>

namespace attn::serve {

// One key per line; blank lines and lines starting with '#' are skipped, spaces around a key
// ignored. Throws naming the file when it cannot be read or holds no key, and FILE:LINE for a
// key with spaces inside.
std::set<std::string> read_api_keys(const std::string& path);

// A token bucket per client: `per_minute` requests at once, refilled at per_minute / 60 a
// second. 0 = no limit. Buckets of clients that are back to full are forgotten when there are
// many, so memory stays bounded by the clients of the last minute.
class RateLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RateLimiter(int per_minute) : per_minute_(per_minute) {}
  bool allow(const std::string& client, Clock::time_point now = Clock::now());
  int per_minute() const { return per_minute_; }

 private:
  struct Bucket {
    double tokens;
    Clock::time_point updated;
  };
  double refilled(const Bucket& bucket, Clock::time_point now) const;

  int per_minute_;
  std::mutex mutex_;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace attn::serve
