#include "serve/access.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/check.h"

namespace attn::serve {

std::set<std::string> read_api_keys(const std::string& path) {
  std::ifstream file(path);
  ATTN_CHECK(file, "--api-keys: cannot read '", path, "': ", std::strerror(errno));
  std::set<std::string> keys;
  int number = 0;
  for (std::string line; std::getline(file, line);) {
    ++number;
    const size_t begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos || line[begin] == '#') continue;
    const std::string key = line.substr(begin, line.find_last_not_of(" \t\r") + 1 - begin);
    ATTN_CHECK(key.find_first_of(" \t") == std::string::npos, path, ":", number,
               ": an API key has no spaces inside (one key per line)");
    keys.insert(key);
  }
  ATTN_CHECK(!keys.empty(), "--api-keys: '", path, "' holds no key (one per line; '#' starts a comment)");
  return keys;
}

double RateLimiter::refilled(const Bucket& bucket, Clock::time_point now) const {
  const double seconds = std::chrono::duration<double>(now - bucket.updated).count();
  return std::min(double(per_minute_), bucket.tokens + std::max(0.0, seconds) * per_minute_ / 60.0);
}

bool RateLimiter::allow(const std::string& client, Clock::time_point now) {
  if (per_minute_ <= 0) return true;
  const std::lock_guard<std::mutex> lock(mutex_);
  constexpr size_t kForgetAbove = 100000;
  if (buckets_.size() > kForgetAbove)
    for (auto it = buckets_.begin(); it != buckets_.end();)
      it = refilled(it->second, now) >= per_minute_ ? buckets_.erase(it) : std::next(it);
  auto [it, fresh] = buckets_.try_emplace(client, Bucket{double(per_minute_), now});
  Bucket& bucket = it->second;
  bucket.tokens = refilled(bucket, now);
  bucket.updated = now;
  if (bucket.tokens < 1.0) return false;
  bucket.tokens -= 1.0;
  return true;
}

}  // namespace attn::serve
