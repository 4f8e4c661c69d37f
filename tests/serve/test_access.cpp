#include <fstream>

#include <catch2/catch.hpp>

#include "serve/access.h"
#include "serve/metrics.h"
#include "temp_dir.h"

using namespace attn::serve;
using Catch::Contains;

TEST_CASE("API keys: one per line - comments and blank lines skipped", "[serve][access]") {
  attn::testing::TempDir dir;
  std::ofstream(dir.file("keys")) << "# keys\n  alpha \n\nbeta\r\n";
  CHECK(read_api_keys(dir.file("keys")) == std::set<std::string>{"alpha", "beta"});
  std::ofstream(dir.file("bad")) << "ok\ntwo words\n";
  CHECK_THROWS_WITH(read_api_keys(dir.file("bad")), Contains(dir.file("bad") + ":2: an API key has no spaces"));
  std::ofstream(dir.file("empty")) << "# none\n";
  CHECK_THROWS_WITH(read_api_keys(dir.file("empty")), Contains("holds no key"));
  CHECK_THROWS_WITH(read_api_keys(dir.file("missing")), Contains("cannot read"));
}

TEST_CASE("rate limit: a burst of N per minute per client - refilled over the minute", "[serve][access]") {
  RateLimiter limiter(3);
  const auto start = RateLimiter::Clock::now();
  for (int i = 0; i < 3; ++i) CHECK(limiter.allow("a", start));
  CHECK_FALSE(limiter.allow("a", start));
  CHECK(limiter.allow("b", start));  // another client has its own
  CHECK_FALSE(limiter.allow("a", start + std::chrono::seconds(19)));
  CHECK(limiter.allow("a", start + std::chrono::seconds(21)));  // 20 s per request at 3 a minute
  RateLimiter none(0);
  for (int i = 0; i < 100; ++i) CHECK(none.allow("a", start));
}

TEST_CASE("metrics in Prometheus text format", "[serve][metrics]") {
  Metrics metrics;
  metrics.add_endpoint("/translate");
  metrics.request_done("/translate", 200, 0.02);
  metrics.request_done("/translate", 200, 3.0);
  metrics.request_done("/translate", 429, 0.001);
  metrics.batch_decoded(5, 40, 50);
  const std::string text = metrics.prometheus_text(7);
  CHECK_THAT(text, Contains("attn_http_requests_total{endpoint=\"/translate\",status=\"200\"} 2\n"));
  CHECK_THAT(text, Contains("attn_http_requests_total{endpoint=\"/translate\",status=\"429\"} 1\n"));
  CHECK_THAT(text, Contains("attn_http_request_duration_seconds_bucket{le=\"0.025\"} 2\n"));
  CHECK_THAT(text, Contains("attn_http_request_duration_seconds_bucket{le=\"+Inf\"} 3\n"));
  CHECK_THAT(text, Contains("attn_http_request_duration_seconds_count 3\n"));
  CHECK_THAT(text, Contains("attn_batch_sentences_bucket{le=\"4\"} 0\n"));
  CHECK_THAT(text, Contains("attn_batch_sentences_bucket{le=\"8\"} 1\n"));
  CHECK_THAT(text, Contains("attn_queue_sentences 7\n"));
  CHECK_THAT(text, Contains("attn_sentences_translated_total 5\n"));
  CHECK_THAT(text, Contains("attn_target_tokens_total 50\n"));
}

TEST_CASE("metrics label a request by its registered endpoint or other - never by the client's path",
          "[serve][metrics]") {
  Metrics metrics;
  metrics.add_endpoint("/translate");
  metrics.request_done("/translate", 200, 0.01);
  for (const std::string path : {"/x\"} 1\nfake_metric 99", "/\xff\xfe", "/unknown", "/translate/"})
    metrics.request_done(path, 404, 0.0);
  const std::string text = metrics.prometheus_text(0);
  CHECK_THAT(text, Contains("attn_http_requests_total{endpoint=\"/translate\",status=\"200\"} 1\n"));
  CHECK_THAT(text, Contains("attn_http_requests_total{endpoint=\"other\",status=\"404\"} 4\n"));
  CHECK(text.find("fake_metric") == std::string::npos);
  CHECK(text.find('\xff') == std::string::npos);
}

TEST_CASE("a Prometheus label value escapes backslash - double quote and line feed", "[serve][metrics]") {
  CHECK(prometheus_label_value("/translate") == "/translate");
  CHECK(prometheus_label_value("a\\b\"c\nd") == "a\\\\b\\\"c\\nd");
}
