// The HTTP side in-process, over a fake backend (each sentence's words reversed): every
// endpoint, every error path and the limits, with a real client on an ephemeral port.
#include <arpa/inet.h>
#include <atomic>
#include <fstream>
#include <httplib.h>
#include <netinet/in.h>
#include <regex>
#include <set>
#include <sstream>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "serve/fake_server.h"
#include "serve/http_server.h"
#include "temp_dir.h"
#include "wait_until.h"

using namespace attn::serve;
using namespace attn::testing;
using Catch::Contains;
using nlohmann::json;

namespace {

json post_json(httplib::Client& client, const std::string& path, const json& body, int expected_status) {
  auto res = client.Post(path.c_str(), body.dump(), "application/json");
  REQUIRE(res);
  INFO(res->body);
  CHECK(res->status == expected_status);
  CHECK(res->get_header_value("Content-Type") == "application/json");
  return json::parse(res->body);
}

}  // namespace

TEST_CASE("LibreTranslate's /translate: strings - arrays - auto - html - alternatives", "[serve][http]") {
  RunningServer running(small_limits());
  auto client = running.client();
  CHECK(post_json(client, "/translate", {{"q", "abc"}, {"source", "en"}, {"target", "it"}}, 200) ==
        json{{"translatedText", "cba"}});
  CHECK(post_json(client, "/translate", {{"q", {"ab", "x\n yz"}}, {"source", "en"}, {"target", "it"}}, 200) ==
        json{{"translatedText", {"ba", "x\n zy"}}});
  const json detected = post_json(client, "/translate", {{"q", "ab"}, {"source", "auto"}, {"target", "it"}}, 200);
  CHECK(detected["detectedLanguage"] == json{{"confidence", 100.0}, {"language", "en"}});
  CHECK(post_json(client, "/translate",
                  {{"q", "<p>ab <b>cd</b></p>"}, {"source", "en"}, {"target", "it"}, {"format", "html"}},
                  200)["translatedText"] == "<p>ba <b>dc</b></p>");
  const json alternatives =
      post_json(client, "/translate", {{"q", "ab"}, {"source", "en"}, {"target", "it"}, {"alternatives", 2}}, 200);
  CHECK(alternatives["alternatives"] == json{"ba (1)", "ba (2)"});
  // A form body, as LibreTranslate's own clients send it.
  auto form = client.Post("/translate", "q=ab%20c&source=en&target=it", "application/x-www-form-urlencoded");
  REQUIRE(form);
  CHECK(form->status == 200);
  CHECK(json::parse(form->body) == json{{"translatedText", "c ba"}});
  // Multipart form data, as a browser's FormData sends it.
  httplib::MultipartFormDataItems items = {{"q", "xy", "", ""}, {"source", "en", "", ""}, {"target", "it", "", ""}};
  auto multipart = client.Post("/translate", items);
  REQUIRE(multipart);
  CHECK(json::parse(multipart->body) == json{{"translatedText", "yx"}});
}

TEST_CASE("/v1/translate: scores and n-best", "[serve][http]") {
  RunningServer running(small_limits());
  auto client = running.client();
  const json answer = post_json(client, "/v1/translate", {{"q", {"ab", ""}}, {"nbest", 2}}, 200);
  REQUIRE(answer["translations"].size() == 2);
  const json& sentence = answer["translations"][0]["sentences"][0];
  CHECK(sentence["text"] == "ba");
  CHECK(sentence["score"] == -0.5);
  CHECK(sentence["nbest"].size() == 2);
  CHECK(sentence["nbest"][1]["text"] == "ba (1)");
  CHECK(answer["translations"][1]["text"] == "");
  CHECK(answer["source"] == "en");
  CHECK_THAT(post_json(client, "/v1/translate", {{"q", "a"}, {"nbest", 4}}, 400)["error"].get<std::string>(),
             Contains("beam 3"));
}

TEST_CASE("/languages - /frontend/settings - /health and /metrics", "[serve][http]") {
  RunningServer running(small_limits());
  auto client = running.client();
  auto languages = client.Get("/languages");
  REQUIRE(languages);
  const json list = json::parse(languages->body);
  CHECK(list[0] == json{{"code", "en"}, {"name", "English"}, {"targets", {"it"}}});
  CHECK(list[1]["code"] == "it");
  auto settings = client.Get("/frontend/settings");
  REQUIRE(settings);
  CHECK(json::parse(settings->body)["charLimit"] == 100);
  CHECK(json::parse(settings->body)["keyRequired"] == false);
  auto health = client.Get("/health");
  REQUIRE(health);
  CHECK(health->status == 200);
  post_json(client, "/translate", {{"q", "abc"}, {"source", "en"}, {"target", "it"}}, 200);
  post_json(client, "/translate", {{"q", "abc"}, {"source", "fr"}, {"target", "it"}}, 400);
  auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  CHECK_THAT(metrics->body, Contains("attn_http_requests_total{endpoint=\"/translate\",status=\"200\"} 1"));
  CHECK_THAT(metrics->body, Contains("attn_http_requests_total{endpoint=\"/translate\",status=\"400\"} 1"));
  CHECK_THAT(metrics->body, Contains("attn_sentences_translated_total 1"));
}

TEST_CASE("before the model is ready: /health and the endpoints answer 503", "[serve][http]") {
  RunningServer running(small_limits(), false);
  auto client = running.client();
  auto health = client.Get("/health");
  REQUIRE(health);
  CHECK(health->status == 503);
  CHECK_THAT(post_json(client, "/translate", {{"q", "a"}, {"source", "en"}, {"target", "it"}}, 503)["error"]
                 .get<std::string>(),
             Contains("loading"));
}

TEST_CASE("every refusal is {\"error\"} with LibreTranslate's status", "[serve][http]") {
  RunningServer running(small_limits());
  auto client = running.client();
  const auto error_of = [&](const std::string& body, const std::string& type, int status) {
    auto res = client.Post("/translate", body, type.c_str());
    REQUIRE(res);
    INFO(body.substr(0, 200) << " -> " << res->body);
    CHECK(res->status == status);
    return json::parse(res->body).at("error").get<std::string>();
  };
  const std::string json_type = "application/json";
  CHECK_THAT(error_of("{", json_type, 400), Contains("not valid JSON"));
  CHECK_THAT(error_of("{\"q\": \"\xc3\x28\", \"source\": \"en\", \"target\": \"it\"}", json_type, 400),
             Contains("not valid JSON"));
  CHECK_THAT(error_of("{\"q\": {\"a\": 1}, \"source\": \"en\", \"target\": \"it\"}", json_type, 400),
             Contains("q must be a string"));
  CHECK(error_of("{\"q\": \"a\", \"source\": \"en\", \"target\": \"de\"}", json_type, 400) == "de is not supported");
  CHECK_THAT(error_of(json{{"q", std::string(101, 'a')}, {"source", "en"}, {"target", "it"}}.dump(), json_type, 400),
             Contains("exceeds text limit (100)"));
  CHECK_THAT(error_of(json{{"q", "a\nb\nc\nd\ne\nf"}, {"source", "en"}, {"target", "it"}}.dump(), json_type, 400),
             Contains("sentence limit (5)"));
  CHECK_THAT(error_of(std::string(5000, ' '), json_type, 413), Contains("over 4096 bytes"));
  CHECK_THAT(error_of(json{{"q", "a"}, {"source", "en"}, {"target", "it"}, {"alternatives", 3}}.dump(), json_type, 400),
             Contains("needs a beam of at least 4"));
  auto missing = client.Get("/nowhere");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(json::parse(missing->body).contains("error"));
}

TEST_CASE("API keys (403) and the rate limit (429)", "[serve][http]") {
  attn::testing::TempDir dir;
  std::ofstream(dir.file("keys")) << "secret\n";
  ServerOptions options = small_limits();
  options.api_keys_file = dir.file("keys");
  options.rate_limit = 2;
  RunningServer running(options);
  auto client = running.client();
  const json request = {{"q", "ab"}, {"source", "en"}, {"target", "it"}};
  CHECK_THAT(post_json(client, "/translate", request, 403)["error"].get<std::string>(), Contains("API key"));
  json wrong = request;
  wrong["api_key"] = "guess";
  CHECK(post_json(client, "/translate", wrong, 403)["error"] == "Invalid API key");
  auto form = client.Post("/translate", "q=ab&source=en&target=it&api_key=secret", "application/x-www-form-urlencoded");
  REQUIRE(form);
  CHECK(form->status == 200);
  json keyed = request;
  keyed["api_key"] = "secret";
  post_json(client, "/translate", keyed, 200);
  CHECK_THAT(post_json(client, "/translate", keyed, 429)["error"].get<std::string>(), Contains("Slowdown"));
  CHECK(json::parse(client.Get("/frontend/settings")->body)["keyRequired"] == true);
}

TEST_CASE("a full queue answers 503 with Retry-After", "[serve][http]") {
  ServerOptions options = small_limits();
  options.queue.max_queue = 2;
  options.queue.batch_size = 1;
  RunningServer running(options);
  running.backend.delay = std::chrono::milliseconds(300);
  std::thread busy([&] {
    auto client = running.client();
    client.Post("/translate", json{{"q", "a\nb"}, {"source", "en"}, {"target", "it"}}.dump(), "application/json");
  });
  running.backend.wait_until_decoding();  // a in its batch, b waiting
  auto client = running.client();
  auto res =
      client.Post("/translate", json{{"q", "c\nd"}, {"source", "en"}, {"target", "it"}}.dump(), "application/json");
  busy.join();
  REQUIRE(res);
  CHECK(res->status == 503);
  CHECK(res->get_header_value("Retry-After") == "1");
}

TEST_CASE("200 concurrent connections all get their own answer", "[serve][http]") {
  ServerOptions options = small_limits();
  options.queue.batch_size = 16;
  options.http_threads = 64;
  RunningServer running(options);
  std::atomic<int> correct{0};
  std::vector<std::string> failures(200);
  std::vector<std::thread> clients;
  for (int i = 0; i < 200; ++i)
    clients.emplace_back([&, i] {
      httplib::Client client("127.0.0.1", running.port);
      client.set_read_timeout(30, 0);
      client.set_connection_timeout(30, 0);
      const std::string text = "s" + std::to_string(i);
      auto res =
          client.Post("/translate", json{{"q", text}, {"source", "en"}, {"target", "it"}}.dump(), "application/json");
      if (res && res->status == 200 &&
          json::parse(res->body)["translatedText"] == std::string(text.rbegin(), text.rend()))
        ++correct;
      else if (!res)
        failures[i] = httplib::to_string(res.error());
      else
        failures[i] = std::to_string(res->status) + " " + res->body;
    });
  for (auto& client : clients) client.join();
  for (const std::string& failure : failures)
    if (!failure.empty()) FAIL_CHECK(failure);
  CHECK(correct == 200);
}

TEST_CASE("stop() answers the requests already accepted", "[serve][http]") {
  auto running = std::make_unique<RunningServer>(small_limits());
  running->backend.delay = std::chrono::milliseconds(300);
  std::optional<int> status;
  std::thread client_thread([&] {
    auto client = running->client();
    auto res =
        client.Post("/translate", json{{"q", "ab"}, {"source", "en"}, {"target", "it"}}.dump(), "application/json");
    if (res) status = res->status;
  });
  running->backend.wait_until_decoding();
  running.reset();  // stop, join, close
  client_thread.join();
  CHECK(status == 200);
}

namespace {

// The value of a /metrics line that starts with `name` (-1 when absent).
double metric(httplib::Client& client, const std::string& name) {
  auto res = client.Get("/metrics");
  REQUIRE(res);
  const size_t at = res->body.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stod(res->body.substr(at + name.size() + 2));
}

}  // namespace

TEST_CASE("a client that disconnects mid-request costs only the sentences already decoding", "[serve][http]") {
  ServerOptions options = small_limits();
  options.queue.batch_size = 1;
  options.limits = {1000, 100};
  RunningServer running(options);
  running.backend.delay = std::chrono::milliseconds(300);
  auto client = running.client();
  const std::string dropped = "attn_sentences_dropped_total{reason=\"client_gone\"}";
  CHECK(metric(client, dropped) == 0);
  {  // A raw socket sends a request of 20 sentences and closes while the first decodes.
    const int raw = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(uint16_t(running.port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(raw, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0);
    std::string text;
    for (int i = 0; i < 20; ++i) text += "s" + std::to_string(i) + "\n";
    const std::string body = json{{"q", text}, {"source", "en"}, {"target", "it"}}.dump();
    const std::string request =
        "POST /translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Content-Length: " +
        std::to_string(body.size()) + "\r\n\r\n" + body;
    REQUIRE(send(raw, request.data(), request.size(), 0) == ssize_t(request.size()));
    running.backend.wait_until_decoding();  // s0 decoding, the others waiting
    close(raw);
  }
  // Dropped when the decoding thread makes its next batch, once s0 is done.
  attn::testing::wait_until([&] { return metric(client, dropped) >= 19; }, 5);
  CHECK(metric(client, dropped) == 19);
  // Others are still served, and the dropped sentences were never decoded.
  CHECK(post_json(client, "/translate", {{"q", "abc"}, {"source", "en"}, {"target", "it"}}, 200) ==
        json{{"translatedText", "cba"}});
  CHECK(metric(client, "attn_sentences_translated_total") == 2);
  CHECK(metric(client, "attn_sentences_dropped_total{reason=\"timeout\"}") == 0);
}

TEST_CASE("/v1/translate: a prefix per text starts its first sentence", "[serve][http]") {
  RunningServer running(small_limits());
  auto client = running.client();
  const auto texts = [](const json& answer) {
    std::vector<std::string> out;
    for (const json& translation : answer["translations"]) out.push_back(translation["text"]);
    return out;
  };
  // The fake backend puts a sentence's prefix before its reversed text.
  CHECK(texts(post_json(client, "/v1/translate", {{"q", {"ab\ncd", "ef"}}, {"prefix", {"P:", ""}}}, 200)) ==
        std::vector<std::string>{"P:ba\ndc", "fe"});
  CHECK(texts(post_json(client, "/v1/translate", {{"q", {"ab", "ef"}}, {"prefix", "Q:"}}, 200)) ==
        std::vector<std::string>{"Q:ba", "Q:fe"});
  CHECK(post_json(client, "/v1/translate", {{"q", {"ab", "ef"}}, {"prefix", {"P:"}}}, 400)["error"] ==
        "Invalid request: prefix has 1 entries for 2 texts of q");
}

TEST_CASE("/v1/translate: word alignments per sentence and n-best entry - their settings and refusals",
          "[serve][http]") {
  RunningServer running(small_limits());
  auto client = running.client();
  const json answer = post_json(client, "/v1/translate", {{"q", "ab\ncd"}, {"nbest", 2}, {"alignments", true}}, 200);
  const json& sentence = answer["translations"][0]["sentences"][1];
  CHECK(sentence["alignment"] == "0-0 1-1");
  CHECK(sentence["nbest"][0]["alignment"] == "0-0 1-1");
  CHECK(sentence["nbest"][1]["alignment"] == "0-1 1-2");
  CHECK(running.backend.last_alignment.layer == -1);  // attn-translate's defaults
  CHECK_FALSE(running.backend.last_alignment.head.has_value());
  CHECK_FALSE(
      post_json(client, "/v1/translate", {{"q", "ab"}}, 200)["translations"][0]["sentences"][0].contains("alignment"));
  // Every setting of attn-translate's --alignment-* flags.
  post_json(client, "/v1/translate",
            {{"q", "ab"},
             {"alignments", "pieces"},
             {"alignment_layer", 1},
             {"alignment_head", 3},
             {"alignment_shift", 1},
             {"alignment_threshold", 0.25},
             {"alignment_words", "any"}},
            200);
  const attn::decode::AlignmentExtraction& asked = running.backend.last_alignment;
  CHECK(asked.unit == attn::decode::AlignmentUnit::pieces);
  CHECK(asked.layer == 1);
  CHECK(asked.head == 3);
  CHECK(asked.shifted);
  CHECK(asked.threshold == 0.25f);
  CHECK(asked.word_linking == attn::decode::WordLinking::any_piece);
  const auto error = [&](const json& request) {
    return post_json(client, "/v1/translate", request, 400)["error"].get<std::string>();
  };
  CHECK_THAT(error({{"q", "a"}, {"alignments", "yes"}}), Contains("alignments must be true, false"));
  CHECK_THAT(error({{"q", "a"}, {"alignment_layer", 0}}), Contains("alignment_layer needs alignments"));
  CHECK_THAT(error({{"q", "a"}, {"alignments", true}, {"alignment_layer", 2}}),
             Contains("alignment_layer 2 is out of range: the model has 2 layer(s)"));
  CHECK_THAT(error({{"q", "a"}, {"alignments", true}, {"alignment_layer", -3}}), Contains("out of range"));
  CHECK_THAT(error({{"q", "a"}, {"alignments", true}, {"alignment_head", 4}}),
             Contains("alignment_head 4 is out of range: layer 1 has 4 head(s)"));
  CHECK_THAT(error({{"q", "a"}, {"alignments", true}, {"alignment_head", "all"}}), Contains("\"mean\""));
  CHECK_THAT(error({{"q", "a"}, {"alignments", true}, {"alignment_shift", 2}}),
             Contains("alignment_shift must be 0 or 1"));
  CHECK_THAT(error({{"q", "a"}, {"alignments", true}, {"alignment_threshold", 1.5}}), Contains("from 0 to 1"));
  CHECK_THAT(error({{"q", "a"}, {"alignments", true}, {"alignment_words", "max"}}),
             Contains("alignment_words must be \"any\", \"mean\""));
}

TEST_CASE("a server without alignments refuses them in one clear error", "[serve][http]") {
  ServerOptions options = small_limits();
  options.port = 0;
  ReversingBackend backend;
  HttpServer server(options);
  const int port = server.bind();
  std::thread thread([&] { server.listen(); });
  ModelInfo info = fake_model();
  info.cross_attention = {};
  info.no_alignments = "this server runs an ensemble of 2 models";
  server.set_backend(backend, info);
  httplib::Client client("127.0.0.1", port);
  CHECK(post_json(client, "/v1/translate", {{"q", "a"}, {"alignments", true}}, 400)["error"] ==
        "Invalid request: alignments are not available from this server: this server runs an ensemble of 2 models");
  server.stop();
  thread.join();
  server.close();
}

TEST_CASE("LibreTranslate's /detect: the run's source language", "[serve][http]") {
  RunningServer running(small_limits());
  auto client = running.client();
  CHECK(post_json(client, "/detect", {{"q", "ciao"}}, 200) ==
        json::array({{{"confidence", 100.0}, {"language", "en"}}}));
  auto form = client.Post("/detect", "q=Hello+world", "application/x-www-form-urlencoded");
  REQUIRE(form);
  CHECK(json::parse(form->body)[0]["language"] == "en");
  CHECK(post_json(client, "/detect", {{"q", " "}}, 200)[0]["confidence"] == 0.0);
  CHECK(post_json(client, "/detect", json::object(), 400)["error"] == "Invalid request: missing q parameter");
}

namespace {

// The response to raw `bytes` sent on a new connection to 127.0.0.1:port, read until the server
// closes it or is silent for a second.
std::string raw_exchange(int port, const std::string& bytes) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(uint16_t(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0);
  REQUIRE(send(fd, bytes.data(), bytes.size(), 0) == ssize_t(bytes.size()));
  const timeval timeout{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = recv(fd, buffer, sizeof(buffer), 0)) > 0;) response.append(buffer, size_t(n));
  close(fd);
  return response;
}

bool valid_utf8(const std::string& text) {
  try {
    (void)json(text).dump();
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

// The first line of `text` that is not Prometheus' text format 0.0.4 ("# HELP name text",
// "# TYPE name counter|gauge|histogram|summary|untyped", or a sample `name{label="value",...}
// number` whose label values are escaped), "" when every line is; `labels` gets every value
// of the label `label`.
std::string prometheus_format_error(const std::string& text, const std::string& label, std::set<std::string>& labels) {
  // A label value: a quoted string whose backslash, quote and line feed are escaped.
  static const std::string name = "[a-zA-Z_:][a-zA-Z0-9_:]*", value = R"re("((?:[^"\\\n]|\\[\\"n])*)")re";
  static const std::string label_pair = "[a-zA-Z_][a-zA-Z0-9_]*=" + value;
  static const std::regex help("# HELP " + name + " [^\n]*");
  static const std::regex type("# TYPE " + name + " (counter|gauge|histogram|summary|untyped)");
  static const std::regex sample(name + "(\\{" + label_pair + "(," + label_pair + ")*\\})? " +
                                 "[-+]?([0-9]+(\\.[0-9]*)?([eE][-+]?[0-9]+)?|Inf|NaN)");
  static const std::regex pair("([a-zA-Z_][a-zA-Z0-9_]*)=" + value);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_match(line, help) || std::regex_match(line, type)) continue;
    if (!std::regex_match(line, sample)) return line;
    for (std::sregex_iterator it(line.begin(), line.end(), pair), end; it != end; ++it)
      if ((*it)[1] == label) labels.insert((*it)[2]);
  }
  return "";
}

}  // namespace

TEST_CASE("/metrics after hostile paths: valid text format - endpoint labels from the routes alone",
          "[serve][http][metrics]") {
  RunningServer running(small_limits());
  auto client = running.client();
  CHECK(post_json(client, "/translate", {{"q", "abc"}, {"source", "en"}, {"target", "it"}}, 200)["translatedText"] ==
        "cba");
  for (int i = 0; i < 40; ++i) CHECK(client.Get("/unknown-" + std::to_string(i))->status == 404);
  // Paths with a quote, a line feed written as %0A, bytes that are not UTF-8, a label's syntax.
  for (const std::string path : {"/a\"b", "/x%0Afake_metric%201", "/\xff\xfe", "/m{endpoint=\"x\"}", "/translate\\"})
    CHECK_THAT(raw_exchange(running.port, "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
               Contains("HTTP/1.1 "));
  auto scrape = client.Get("/metrics");
  REQUIRE(scrape);
  REQUIRE(scrape->status == 200);
  const std::string& text = scrape->body;
  CHECK(valid_utf8(text));
  std::set<std::string> endpoints;
  CHECK(prometheus_format_error(text, "endpoint", endpoints) == "");
  const std::set<std::string> routes = {"/translate",    "/detect", "/languages", "/frontend/settings",
                                        "/v1/translate", "/health", "/metrics",   "other"};
  for (const std::string& endpoint : endpoints) {
    INFO(endpoint);
    CHECK(routes.count(endpoint) == 1);
  }
  CHECK(endpoints.count("other") == 1);
  CHECK(text.find("fake_metric") == std::string::npos);
}
