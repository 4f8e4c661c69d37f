#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

#include "serve/sentence_queue.h"
#include "wait_until.h"

using namespace attn::serve;

namespace {

// Encodes a text as its byte values (a '~' as no token); decodes a sentence to its ids reversed,
// with as many hypotheses as asked, and records every batch.
class FakeBackend : public BatchBackend {
 public:
  std::vector<std::vector<int32_t>> encode(const std::vector<std::string>& texts) override {
    std::vector<std::vector<int32_t>> out;
    for (const std::string& text : texts) {
      std::vector<int32_t> ids;
      if (text != "~")
        for (char c : text) ids.push_back(int32_t(c));
      out.push_back(ids);
    }
    return out;
  }
  std::vector<SentenceResult> decode(const std::vector<const std::vector<int32_t>*>& sentences, int nbest,
                                     const std::vector<std::optional<attn::decode::AlignmentExtraction>>& alignments,
                                     const std::vector<std::optional<std::string>>& prefixes) override {
    if (fail) throw std::runtime_error("decoder broke");
    for (const auto& alignment : alignments) aligned.push_back(alignment.has_value());
    prefixed.insert(prefixed.end(), prefixes.begin(), prefixes.end());
    {
      std::lock_guard<std::mutex> lock(mutex);
      std::vector<size_t> lengths;
      for (const auto* sentence : sentences) lengths.push_back(sentence->size());
      batches.push_back(lengths);
    }
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    std::vector<SentenceResult> results;
    for (const auto* sentence : sentences) {
      SentenceResult result;
      for (int k = 0; k < nbest; ++k) {
        attn::decode::Hypothesis hypothesis;
        hypothesis.tokens.assign(sentence->rbegin(), sentence->rend());
        result.hypotheses.push_back(hypothesis);
        result.texts.push_back(std::string(hypothesis.tokens.begin(), hypothesis.tokens.end()) + "#" +
                               std::to_string(k));
      }
      results.push_back(result);
    }
    return results;
  }
  std::mutex mutex;
  std::vector<std::vector<size_t>> batches;
  std::vector<bool> aligned;                         // per decoded sentence, in order: whether its links were asked for
  std::vector<std::optional<std::string>> prefixed;  // per decoded sentence, in order: its prefix
  std::chrono::milliseconds delay{0};
  bool fail = false;

  // Waits (at most 10 s) until the first batch is decoding.
  void wait_until_decoding() {
    const bool decoding = attn::testing::wait_until(
        [&] {
          std::lock_guard<std::mutex> lock(mutex);
          return !batches.empty();
        },
        10);
    if (!decoding) FAIL("no batch began decoding within 10 s");
  }
};

}  // namespace

TEST_CASE("each request gets its own results in its own order", "[serve][queue]") {
  FakeBackend backend;
  SentenceQueue queue({4, std::chrono::milliseconds(20), 1000, 16}, backend);
  auto a = queue.submit({"abc", "~", "de"}, 1);
  auto b = queue.submit({"xyz"}, 2);
  const auto ra = a->wait(), rb = b->wait();
  REQUIRE(ra.size() == 3);
  CHECK(ra[0].texts == std::vector<std::string>{"cba#0"});
  CHECK(ra[1].texts.empty());  // no token: answered without decoding
  CHECK(ra[2].texts == std::vector<std::string>{"ed#0"});
  CHECK(rb[0].texts == std::vector<std::string>{"zyx#0", "zyx#1"});
  // The n-best request was decoded in a batch of its own.
  for (const auto& batch : backend.batches) CHECK(batch.size() <= 4);
}

TEST_CASE("sentences of concurrent requests share batches", "[serve][queue]") {
  FakeBackend backend;
  SentenceQueue queue({8, std::chrono::milliseconds(200), 1000, 64}, backend);
  std::vector<std::thread> clients;
  std::atomic<int> correct{0};
  for (int i = 0; i < 8; ++i)
    clients.emplace_back([&, i] {
      const std::string text(size_t(i + 1), char('a' + i));
      if (queue.submit({text}, 1)->wait()[0].texts[0] == text + "#0") ++correct;
    });
  for (auto& client : clients) client.join();
  CHECK(correct == 8);
  // Eight single-sentence requests within the wait: one batch (or two if a thread was slow).
  CHECK(backend.batches.size() <= 2);
}

TEST_CASE("a batch takes the sentences closest in length to the oldest", "[serve][queue]") {
  FakeBackend backend;
  backend.delay = std::chrono::milliseconds(50);
  SentenceQueue queue({2, std::chrono::milliseconds(0), 1000, 16}, backend);
  auto first = queue.submit({"a"}, 1);  // decoded alone while the rest arrive
  backend.wait_until_decoding();
  auto rest = queue.submit({"aaaaaaaa", "aaa", "aaaaaaa", "aa"}, 1);
  first->wait();
  const auto results = rest->wait();
  CHECK(results[0].texts[0] == "aaaaaaaa#0");
  REQUIRE(backend.batches.size() == 3);
  CHECK(backend.batches[1] == std::vector<size_t>{8, 7});  // the oldest (8) with its nearest (7)
  CHECK(backend.batches[2] == std::vector<size_t>{3, 2});
}

TEST_CASE("a full queue refuses a request whole - a closed one refuses all", "[serve][queue]") {
  FakeBackend backend;
  backend.delay = std::chrono::milliseconds(100);
  SentenceQueue queue({1, std::chrono::milliseconds(0), 3, 16}, backend);
  auto busy = queue.submit({"a"}, 1);
  backend.wait_until_decoding();  // "a" is being decoded
  auto fits = queue.submit({"b", "c"}, 1);
  CHECK_THROWS_AS(queue.submit({"d", "e"}, 1), QueueFull);
  CHECK(queue.depth() == 2);
  CHECK(fits->wait().size() == 2);
  queue.close();
  CHECK_THROWS_AS(queue.submit({"f"}, 1), QueueFull);
}

// Counts the drops the queue reports, by reason.
struct DropCounter : QueueObserver {
  std::atomic<int64_t> client_gone{0}, timeout{0};
  void batch_decoded(int, int64_t, int64_t) override {}
  void sentences_dropped(DropReason reason, int64_t sentences) override {
    (reason == DropReason::client_gone ? client_gone : timeout) += sentences;
  }
};

TEST_CASE("a cancelled request's waiting sentences are not decoded - and are counted by reason", "[serve][queue]") {
  FakeBackend backend;
  backend.delay = std::chrono::milliseconds(50);
  DropCounter drops;
  SentenceQueue queue({1, std::chrono::milliseconds(0), 100, 16}, backend, &drops);
  auto busy = queue.submit({"a"}, 1);
  backend.wait_until_decoding();
  auto gone = queue.submit({"bb", "cc", "dd"}, 1);
  gone->cancel(DropReason::client_gone);
  gone->cancel(DropReason::timeout);  // the first reason stays
  auto late = queue.submit({"ff"}, 1);
  late->cancel(DropReason::timeout);
  auto after = queue.submit({"eee"}, 1);
  CHECK(after->wait()[0].texts[0] == "eee#0");
  CHECK_FALSE(gone->wait_for(std::chrono::milliseconds(1)));
  for (const auto& batch : backend.batches) CHECK(batch != std::vector<size_t>{2});
  CHECK(drops.client_gone == 3);
  CHECK(drops.timeout == 1);
}

TEST_CASE("a decoding error reaches the requests of its batch only", "[serve][queue]") {
  FakeBackend backend;
  SentenceQueue queue({4, std::chrono::milliseconds(0), 100, 16}, backend);
  backend.fail = true;
  auto broken = queue.submit({"a"}, 1);
  CHECK_THROWS_WITH(broken->wait(), "decoder broke");
  backend.fail = false;
  CHECK(queue.submit({"b"}, 1)->wait()[0].texts[0] == "b#0");
}

TEST_CASE("close() decodes what was accepted", "[serve][queue]") {
  FakeBackend backend;
  auto queue = std::make_unique<SentenceQueue>(QueueOptions{2, std::chrono::milliseconds(1000), 100, 16}, backend);
  auto pending = queue->submit({"a", "b", "c"}, 1);
  queue->close();  // without waiting the second
  CHECK(pending->wait_for(std::chrono::milliseconds(0)));
  CHECK(pending->wait()[2].texts[0] == "c#0");
}

TEST_CASE("a request's alignment settings reach the backend with each of its sentences only", "[serve][queue]") {
  FakeBackend backend;
  SentenceQueue queue({4, std::chrono::milliseconds(50), 100, 16}, backend);
  attn::decode::AlignmentExtraction extraction;
  extraction.layer = 0;
  auto plain = queue.submit({"ab"}, 1);
  auto aligned = queue.submit({"cd", "ef"}, 1, extraction);
  plain->wait();
  aligned->wait();
  REQUIRE(backend.batches.size() == 1);  // one batch of both requests
  CHECK(backend.aligned == std::vector<bool>{false, true, true});
}

TEST_CASE("a request's prefixes reach the backend with each of its sentences only", "[serve][queue]") {
  FakeBackend backend;
  SentenceQueue queue({4, std::chrono::milliseconds(50), 100, 16}, backend);
  auto plain = queue.submit({"ab"}, 1);
  auto prefixed = queue.submit({"cd", "ef"}, 1, std::nullopt, {std::string("Ciao"), std::nullopt});
  plain->wait();
  prefixed->wait();
  REQUIRE(backend.batches.size() == 1);  // one batch of both requests
  CHECK(backend.prefixed == std::vector<std::optional<std::string>>{std::nullopt, "Ciao", std::nullopt});
  CHECK_THROWS_WITH(queue.submit({"gh", "ij"}, 1, std::nullopt, {std::string("one")}),
                    Catch::Contains("1 prefixes for 2 sentences"));
}

TEST_CASE("a task runs on the decoding thread between batches - its error reaches its future", "[serve][queue]") {
  FakeBackend backend;
  backend.delay = std::chrono::milliseconds(50);
  SentenceQueue queue(QueueOptions{1, std::chrono::milliseconds(0), 100, 16}, backend);
  std::thread::id decoding_thread;
  auto first = queue.submit({"a"}, 1);
  backend.wait_until_decoding();
  auto second = queue.submit({"b"}, 1);  // waits behind the task
  std::vector<size_t> batches_before_task;
  std::future<void> task = queue.run_task([&] {
    decoding_thread = std::this_thread::get_id();
    std::lock_guard<std::mutex> lock(backend.mutex);
    batches_before_task.push_back(backend.batches.size());
  });
  task.get();
  CHECK(decoding_thread != std::this_thread::get_id());
  CHECK(batches_before_task == std::vector<size_t>{1});  // after the batch decoding, before the next
  CHECK(first->wait()[0].texts[0] == "a#0");
  CHECK(second->wait()[0].texts[0] == "b#0");
  CHECK_THROWS_WITH(queue.run_task([] { throw std::runtime_error("model broke"); }).get(), "model broke");
  queue.close();
  CHECK_THROWS_AS(queue.run_task([] {}), QueueFull);
}
