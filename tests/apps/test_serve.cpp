// attn-serve as its users run it: a tiny trained run served on an ephemeral 127.0.0.1 port,
// asked over real HTTP (httplib's client, and tests/serve/libretranslate_client.py, written as
// LibreTranslate's own Python client sends requests). Translations equal attn-translate's;
// hostile bodies get clear errors and the server stays up; SIGTERM exits 0 after answering.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <httplib.h>
#include <map>
#include <netinet/in.h>
#include <regex>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apps/app_fixtures.h"
#include "wait_until.h"

using namespace attn::testing;
using Catch::Contains;
using nlohmann::json;

namespace {

// A tiny trained run with its languages named, trained once for all the tests here.
struct TrainedRun {
  TempDir dir;
  std::string run, config;
  TrainedRun() {
    config = write_tiny_setup(dir, {{"max_steps", 20}, {"valid_every", 20}});
    json setup = json::parse(read_text(config));
    setup["languages"] = {{"source", "en"}, {"target", "it"}};
    setup["decode"]["beam"] = 2;
    std::ofstream(config) << setup.dump(2) << '\n';
    Result trained = run_program(dir, "attn-train", "--config " + attn::testing::quoted(config));
    INFO("attn-train stderr:\n" << trained.err);
    REQUIRE(trained.exit_code == 0);
    run = dir.file("run");
  }
};

const TrainedRun& trained_run() {
  static const TrainedRun run;
  return run;
}

// attn-serve on the run with `flags`, its port read from its log line; SIGTERM at the end.
class Server {
 public:
  Server(const TempDir& dir, const std::vector<std::string>& flags) : dir_(dir) {
    std::vector<std::string> arguments = {"--model", trained_run().run, "--port", "0", "--threads", "1"};
    arguments.insert(arguments.end(), flags.begin(), flags.end());
    pid_ = spawn(dir, "attn-serve", arguments);
    const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)");
    const bool ready = wait_until(
        [&] {
          std::smatch match;
          const std::string err = log();
          if (port_ == 0 && std::regex_search(err, match, listening)) port_ = std::stoi(match[1]);
          if (port_ == 0) return false;
          auto health = client().Get("/health");
          return health && health->status == 200;
        },
        60);
    if (!ready) FAIL("attn-serve did not become ready:\n" << log());
  }
  ~Server() {
    if (pid_ > 0) stop();
  }
  int stop() {
    kill(pid_, SIGTERM);
    const int code = wait_for(pid_);
    pid_ = -1;
    return code;
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(60, 0);
    return c;
  }
  std::string log() const { return read_text(dir_.file("child.err")); }
  int port() const { return port_; }
  // The value of the /metrics line that starts with `name` (-1 when absent).
  double metric(const std::string& name) const {
    auto res = client().Get("/metrics");
    REQUIRE(res);
    const size_t at = res->body.find("\n" + name + " ");
    return at == std::string::npos ? -1 : std::stod(res->body.substr(at + name.size() + 2));
  }
  // Waits (at most 30 s) until sentences wait in the queue.
  void wait_until_queued() const {
    REQUIRE(attn::testing::wait_until([&] { return metric("attn_queue_sentences") > 0; }, 30));
  }
  pid_t pid() const { return pid_; }

 private:
  const TempDir& dir_;
  pid_t pid_ = -1;
  int port_ = 0;
};

json translate(const Server& server, const json& request, int expected_status = 200) {
  auto res = server.client().Post("/translate", request.dump(), "application/json");
  REQUIRE(res);
  INFO(res->body);
  CHECK(res->status == expected_status);
  return json::parse(res->body);
}

std::vector<std::string> lines_to_translate(int count) {
  const std::vector<std::string> valid = split_lines(read_text(trained_run().dir.file("valid.src")));
  return std::vector<std::string>(valid.begin(), valid.begin() + count);
}

std::vector<std::string> attn_translate(const TempDir& dir, const std::vector<std::string>& lines,
                                        const std::string& flags) {
  write_lines(dir.file("input.txt"), lines);
  Result result =
      run_program(dir, "attn-translate", "--model " + attn::testing::quoted(trained_run().run) + " --quiet " + flags,
                  dir.file("input.txt"));
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  return split_lines(result.out);
}

}  // namespace

TEST_CASE("attn-serve translates as attn-translate does - one request or many", "[cli][serve]") {
  TempDir dir;
  const std::vector<std::string> lines = lines_to_translate(3);
  {  // One request of three lines: one batch, as attn-translate's batch of three.
    Server server(dir, {"--max-batch-wait-ms", "200"});
    const json answer = translate(server, {{"q", lines}, {"source", "en"}, {"target", "it"}});
    CHECK(answer["translatedText"].get<std::vector<std::string>>() == attn_translate(dir, lines, "--batch-size 3"));
    const json native = [&] {
      auto res = server.client().Post("/v1/translate", json{{"q", lines[0]}, {"nbest", 2}}.dump(), "application/json");
      REQUIRE(res);
      return json::parse(res->body);
    }();
    CHECK(native["translations"][0]["sentences"][0]["nbest"].size() == 2);
    CHECK(native["translations"][0]["text"] == answer["translatedText"][0]);
    CHECK(server.stop() == 0);
  }
  {  // Concurrent single-line requests, batches of one: each as attn-translate --batch-size 1.
    Server server(dir, {"--batch-size", "1"});
    std::vector<std::string> served(lines.size());
    std::vector<std::thread> clients;
    for (size_t i = 0; i < lines.size(); ++i)
      clients.emplace_back([&, i] {
        auto res = server.client().Post("/translate", json{{"q", lines[i]}, {"source", "en"}, {"target", "it"}}.dump(),
                                        "application/json");
        if (res && res->status == 200) served[i] = json::parse(res->body)["translatedText"].get<std::string>();
      });
    for (auto& client : clients) client.join();
    CHECK(served == attn_translate(dir, lines, "--batch-size 1"));
  }
}

TEST_CASE("attn-serve's target prefix: per text in /v1/translate and --prefix for every request", "[cli][serve]") {
  TempDir dir;
  const std::vector<std::string> lines = lines_to_translate(3);
  auto native = [](const Server& server, const json& request) {
    auto res = server.client().Post("/v1/translate", request.dump(), "application/json");
    REQUIRE(res);
    INFO(res->body);
    REQUIRE(res->status == 200);
    std::vector<std::string> texts;
    const json answer = json::parse(res->body);  // a range-for over a temporary's member would dangle
    for (const json& translation : answer["translations"]) texts.push_back(translation["text"]);
    return texts;
  };
  {  // One request of three lines: one batch, as attn-translate's batch of three.
    Server server(dir, {"--max-batch-wait-ms", "200"});
    CHECK(native(server, {{"q", lines}, {"prefix", "ake"}}) ==
          attn_translate(dir, lines, "--batch-size 3 --prefix ake"));
    const std::vector<std::string> mixed = native(server, {{"q", lines}, {"prefix", {"ake", "", "ite"}}});
    CHECK(mixed[0].rfind("ake", 0) == 0);
    CHECK(mixed[2].rfind("ite", 0) == 0);
    CHECK(server.stop() == 0);
  }
  {  // The server's own prefix, which a request's replaces.
    Server server(dir, {"--max-batch-wait-ms", "200", "--prefix", "ite"});
    const json answer = translate(server, {{"q", lines}, {"source", "en"}, {"target", "it"}});
    CHECK(answer["translatedText"].get<std::vector<std::string>>() ==
          attn_translate(dir, lines, "--batch-size 3 --prefix ite"));
    CHECK(native(server, {{"q", lines}, {"prefix", "ake"}}) ==
          attn_translate(dir, lines, "--batch-size 3 --prefix ake"));
    CHECK(server.stop() == 0);
  }
}

TEST_CASE("attn-serve answers the requests of LibreTranslate's Python client and web page - keys refused",
          "[cli][serve]") {
  TempDir dir;
  std::ofstream(dir.file("keys")) << "# clients\nsecret-1\n";
  Server server(dir, {"--api-keys", dir.file("keys"), "--rate-limit", "1000"});
  const std::string client_script = ATTN_SOURCE_DIR "/tests/serve/libretranslate_client.py";
  const std::string line = lines_to_translate(1)[0];  // made-up words: no quote inside
  const std::string command = "python3 " + attn::testing::quoted(client_script) + " " + std::to_string(server.port()) +
                              " secret-1 " + attn::testing::quoted(line) + " > " +
                              attn::testing::quoted(dir.file("client.out")) + " 2>&1";
  const int status = std::system(command.c_str());
  INFO(read_text(dir.file("client.out")));
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const std::string expected = attn_translate(dir, {line}, "").at(0);
  CHECK_THAT(read_text(dir.file("client.out")), Contains("translated: " + expected));
  CHECK(translate(server, {{"q", "x"}, {"source", "en"}, {"target", "it"}}, 403)["error"] ==
        "Please contact the server operator to get an API key");
}

TEST_CASE("attn-serve survives hostile bodies and answers each clearly", "[cli][serve]") {
  TempDir dir;
  Server server(dir, {});
  auto client = server.client();
  const auto post = [&](const std::string& body, const std::string& type = "application/json") {
    auto res = client.Post("/translate", body, type.c_str());
    REQUIRE(res);
    return std::pair<int, std::string>(res->status, json::parse(res->body).value("error", ""));
  };
  CHECK(post("{\"q\": [1, 2], \"source\": \"en\", \"target\": \"it\"}").first == 400);
  CHECK(post("not json").first == 400);
  CHECK(post("{\"q\": \"\xff\xfe\", \"source\": \"en\", \"target\": \"it\"}").first == 400);
  CHECK(post("q=%ff%fe&source=en&target=it", "application/x-www-form-urlencoded").first == 400);
  const auto big = post(std::string(10 << 20, 'a'));
  CHECK(big.first == 413);
  CHECK_THAT(big.second, Contains("over 1048576 bytes"));
  std::vector<std::string> many(10000, "kan");
  const auto too_many = post(json{{"q", many}, {"source", "en"}, {"target", "it"}}.dump());
  CHECK(too_many.first == 400);
  CHECK_THAT(too_many.second, Contains("exceeds"));  // the text limit (30,000 characters) before the sentence limit
  // HTML with unclosed and nested tags: translated around the markup.
  const json html = translate(
      server,
      {{"q", "<div><p>kan <b>ton<i>rin</b></div><span"}, {"source", "auto"}, {"target", "it"}, {"format", "html"}});
  const std::string text = html["translatedText"];
  CHECK(text.rfind("<div><p>", 0) == 0);
  CHECK_THAT(text, Contains("<b>"));
  CHECK_THAT(text, Contains("</div><span"));
  CHECK(html["detectedLanguage"]["language"] == "en");
  // Still serving.
  auto health = client.Get("/health");
  REQUIRE(health);
  CHECK(health->status == 200);
  CHECK(server.stop() == 0);
}

TEST_CASE("attn-serve: SIGTERM answers the requests in flight and exits 0", "[cli][serve]") {
  TempDir dir;
  // A long wait for a batch to fill keeps the request in flight when the signal comes.
  Server server(dir, {"--max-batch-wait-ms", "1500"});
  std::optional<int> status;
  std::thread client_thread([&] {
    auto res = server.client().Post("/translate", json{{"q", "kan ton"}, {"source", "en"}, {"target", "it"}}.dump(),
                                    "application/json");
    if (res) status = res->status;
  });
  server.wait_until_queued();
  CHECK(server.stop() == 0);
  client_thread.join();
  CHECK(status == 200);
  CHECK_THAT(server.log(), Contains("attn-serve stopped"));
}

TEST_CASE("attn-serve refuses a run without languages in one line", "[cli][serve]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir, {{"max_steps", 2}, {"valid_every", 2}});
  REQUIRE(run_program(dir, "attn-train", "--config " + attn::testing::quoted(config)).exit_code == 0);
  check_refused(run_program(dir, "attn-serve", "--model " + attn::testing::quoted(dir.file("run")) + " --port 0"),
                "languages is not set and the training files' extensions name no language pair");
}

TEST_CASE("attn-serve: a model that fails to load exits in one line naming the flag", "[cli][serve]") {
  // The model loads on a thread of its own (apps/attn-serve.cpp): its error must still end the
  // program with the one line and a non-zero exit, not hang the HTTP thread or abort.
  TempDir dir;
  const Result result = run_program(
      dir, "attn-serve",
      "--model " + attn::testing::quoted(trained_run().run) + " --checkpoint no-such-checkpoint.safetensors --port 0");
  INFO("stderr:\n" << result.err);
  CHECK(result.exit_code > 0);
  // The log's "listening ... loading the model" comes first; then the error, alone and last.
  const std::vector<std::string> lines = split_lines(result.err);
  REQUIRE(!lines.empty());
  CHECK_THAT(lines.back(), Contains("[error] --checkpoint no-such-checkpoint.safetensors does not exist"));
  CHECK(std::count_if(lines.begin(), lines.end(),
                      [](const std::string& line) { return line.find("[error]") != std::string::npos; }) == 1);
}

TEST_CASE("attn-serve on a port another process holds exits in one line naming it", "[cli][serve]") {
  // The test holds a listening socket on an ephemeral 127.0.0.1 port.
  const int held = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(held >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(held, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0);
  REQUIRE(listen(held, 1) == 0);
  socklen_t length = sizeof(address);
  REQUIRE(getsockname(held, reinterpret_cast<sockaddr*>(&address), &length) == 0);
  const std::string port = std::to_string(ntohs(address.sin_port));
  TempDir dir;
  const Result result =
      run_program(dir, "attn-serve", "--model " + attn::testing::quoted(trained_run().run) + " --port " + port);
  close(held);
  check_refused(result, "127.0.0.1:" + port);
  CHECK_THAT(result.err, Contains("--port"));
  CHECK_THAT(result.err, Contains("in use by another process"));
}

TEST_CASE("attn-serve's alignments equal attn-translate --alignments for the same lines and settings", "[cli][serve]") {
  TempDir dir;
  const std::vector<std::string> lines = lines_to_translate(3);
  // One request of three lines: one batch of three, as attn-translate's.
  Server server(dir, {"--max-batch-wait-ms", "200"});
  const auto served = [&](json request) {
    request["q"] = lines;
    request["alignments"] = true;
    auto res = server.client().Post("/v1/translate", request.dump(), "application/json");
    REQUIRE(res);
    INFO(res->body);
    REQUIRE(res->status == 200);
    std::vector<std::string> out;
    const json answer = json::parse(res->body);
    for (const json& translation : answer["translations"]) {
      const json& sentence = translation["sentences"][0];
      CHECK(sentence["nbest"][0]["alignment"] == sentence["alignment"]);
      out.push_back(sentence["text"].get<std::string>() + " ||| " + sentence["alignment"].get<std::string>());
    }
    return out;
  };
  CHECK(served(json::object()) == attn_translate(dir, lines, "--batch-size 3 --alignments"));
  const json settings = {{"alignment_layer", 0},
                         {"alignment_head", 1},
                         {"alignment_shift", 1},
                         {"alignment_threshold", 0.3},
                         {"alignment_words", "any"}};
  CHECK(served(settings) ==
        attn_translate(dir, lines,
                       "--batch-size 3 --alignments --alignment-layer 0 --alignment-head 1 --alignment-shift 1 "
                       "--alignment-threshold 0.3 --alignment-words any"));
  auto res =
      server.client().Post("/v1/translate", json{{"q", lines}, {"alignments", "pieces"}}.dump(), "application/json");
  REQUIRE(res);
  const std::vector<std::string> piece_lines = attn_translate(dir, lines, "--batch-size 3 --alignments pieces");
  const json piece_answer = json::parse(res->body);
  for (size_t i = 0; i < lines.size(); ++i) {
    const json& sentence = piece_answer["translations"][i]["sentences"][0];
    CHECK(sentence["text"].get<std::string>() + " ||| " + sentence["alignment"].get<std::string>() == piece_lines[i]);
  }
  // The model has one decoder layer of two heads.
  auto refused = server.client().Post(
      "/v1/translate", json{{"q", "kan"}, {"alignments", true}, {"alignment_head", 2}}.dump(), "application/json");
  REQUIRE(refused);
  CHECK(refused->status == 400);
  CHECK_THAT(json::parse(refused->body)["error"].get<std::string>(), Contains("layer 0 has 2 head(s)"));
  CHECK(server.stop() == 0);
}

TEST_CASE("attn-serve: a client that disconnects mid-request has its waiting sentences dropped", "[cli][serve]") {
  TempDir dir;
  Server server(dir, {"--batch-size", "1", "--char-limit", "0", "--max-sentences", "0"});
  std::string text;
  const std::vector<std::string> lines = lines_to_translate(20);
  for (int copy = 0; copy < 100; ++copy)
    for (const std::string& line : lines) text += line + "\n";
  const std::string body = json{{"q", text}, {"source", "en"}, {"target", "it"}}.dump();
  const int raw = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(uint16_t(server.port()));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(connect(raw, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0);
  const std::string request =
      "POST /translate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  REQUIRE(send(raw, request.data(), request.size(), 0) == ssize_t(request.size()));
  server.wait_until_queued();
  close(raw);
  const std::string dropped = "attn_sentences_dropped_total{reason=\"client_gone\"}";
  wait_until([&] { return server.metric(dropped) != 0; }, 30);
  CHECK(server.metric(dropped) > 0);
  CHECK(server.metric(dropped) + server.metric("attn_sentences_translated_total") <= 2000);
  // Still serving.
  CHECK(translate(server, {{"q", lines[0]}, {"source", "en"}, {"target", "it"}})["translatedText"] ==
        attn_translate(dir, {lines[0]}, "").at(0));
  CHECK(server.metric(dropped) + server.metric("attn_sentences_translated_total") <= 2001);
  CHECK(server.stop() == 0);
}

namespace {

// attn-dump-attention's CSV of one line: "kind/layer/head/query/key" -> weight text.
std::map<std::string, std::string> dumped_weights(const TempDir& dir, const std::string& source,
                                                  const std::string& flags) {
  write_lines(dir.file("pair.src"), {source});
  Result result =
      run_program(dir, "attn-dump-attention",
                  "--model " + quoted(trained_run().run) + " --src " + quoted(dir.file("pair.src")) + " " + flags);
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  std::map<std::string, std::string> weights;
  const std::vector<std::string> lines = split_lines(result.out);
  for (size_t i = 1; i < lines.size(); ++i) {
    std::vector<std::string> fields;
    std::stringstream row(lines[i]);
    for (std::string field; std::getline(row, field, ',');) fields.push_back(field);
    REQUIRE(fields.size() == 9);  // the tiny run's pieces hold no comma, so no field is quoted
    weights[fields[1] + "/" + fields[2] + "/" + fields[3] + "/" + fields[4] + "/" + fields[6]] = fields[8];
  }
  return weights;
}

// The same from /v1/attention's answer (lib/serve/attention_json.h).
std::map<std::string, std::string> served_weights(const json& answer) {
  std::map<std::string, std::string> weights;
  for (const json& map : answer["sentences"][0]["maps"]) {
    std::stringstream text(map["weights"].get<std::string>());
    const int64_t keys = map["keys"];
    int64_t i = 0;
    for (std::string weight; text >> weight; ++i)
      weights[map["kind"].get<std::string>() + "/" + map["layer"].dump() + "/" + map["head"].dump() + "/" +
              std::to_string(i / keys) + "/" + std::to_string(i % keys)] = weight;
  }
  return weights;
}

json post_attention(const Server& server, const json& request, int expected_status = 200) {
  auto res = server.client().Post("/v1/attention", request.dump(), "application/json");
  REQUIRE(res);
  INFO(res->body);
  REQUIRE(res->status == expected_status);
  return json::parse(res->body);
}

}  // namespace

TEST_CASE("attn-serve's /v1/attention: attn-dump-attention's weights - free and forced - selections and limits",
          "[cli][serve]") {
  TempDir dir;
  const std::vector<std::string> valid = split_lines(read_text(trained_run().dir.file("valid.src")));
  const std::vector<std::string> references = split_lines(read_text(trained_run().dir.file("valid.tgt")));
  Server server(dir, {"--char-limit", "2000", "--max-attention-bytes", "60000"});
  // Free mode: the server's beam (2, the run's), as attn-dump-attention --beam 2.
  const json free = post_attention(server, {{"q", valid[0]}});
  CHECK(free["mode"] == "translated");
  CHECK(served_weights(free) == dumped_weights(dir, valid[0], "--beam 2"));
  CHECK(free["sentences"][0]["target_tokens"].back() == "</s>");
  CHECK(free["alignment"]["unit"] == "words");
  // Forced mode: the reference's weights.
  const json forced = post_attention(server, {{"q", valid[1]}, {"target", references[1]}});
  CHECK(forced["mode"] == "forced");
  CHECK(forced["sentences"][0]["target"] == references[1]);
  write_lines(dir.file("pair.tgt"), {references[1]});
  CHECK(served_weights(forced) == dumped_weights(dir, valid[1], "--tgt " + quoted(dir.file("pair.tgt"))));
  // A selection keeps those maps only.
  const json some = post_attention(server, {{"q", valid[0]}, {"kinds", {"cross"}}, {"heads", "1"}});
  REQUIRE(some["sentences"][0]["maps"].size() == 1);
  CHECK(some["sentences"][0]["maps"][0]["head"] == 1);
  // Refusals name the field or the flag.
  CHECK_THAT(post_attention(server, {{"q", valid[0]}, {"heads", {5}}}, 400)["error"].get<std::string>(),
             Contains("heads: head 5 is out of range"));
  CHECK_THAT(post_attention(server, {{"q", valid[0]}, {"kinds", "sideways"}}, 400)["error"].get<std::string>(),
             Contains("kinds"));
  CHECK_THAT(post_attention(server, {{"q", valid[0]}, {"beam", 3}}, 400)["error"].get<std::string>(),
             Contains("beam must be from 1 to 2"));
  CHECK_THAT(post_attention(server, {{"q", valid[0]}, {"target", "a\nb"}}, 400)["error"].get<std::string>(),
             Contains("target has 2 sentence(s)"));
  CHECK_THAT(post_attention(server, {{"q", std::string(2001, 'a')}}, 400)["error"].get<std::string>(),
             Contains("2000"));
  std::string all_lines;  // every dev line: about three times the bound
  for (const std::string& line : valid) all_lines += line + "\n";
  CHECK_THAT(post_attention(server, {{"q", all_lines}}, 413)["error"].get<std::string>(),
             Contains("--max-attention-bytes"));
  // The page and the run's log.
  auto page = server.client().Get("/");
  REQUIRE(page);
  CHECK(page->status == 200);
  CHECK_THAT(page->body, Contains("id=\"heatmap\""));
  auto run = server.client().Get("/v1/run");
  REQUIRE(run);
  const json summary = json::parse(run->body);
  CHECK(summary["log"].size() == split_lines(read_text(trained_run().run + "/train.log.jsonl")).size());
  CHECK(summary["config"]["decode"]["beam"] == 2);
  CHECK(server.stop() == 0);
}

TEST_CASE("attn-dump-attention --html: the explorer's page with the dump's weights inside", "[cli][serve]") {
  TempDir dir;
  const std::vector<std::string> valid = split_lines(read_text(trained_run().dir.file("valid.src")));
  write_lines(dir.file("pair.src"), {valid[0]});
  Result result = run_program(dir, "attn-dump-attention",
                              "--model " + quoted(trained_run().run) + " --src " + quoted(dir.file("pair.src")) +
                                  " --html " + quoted(dir.file("page.html")));
  INFO(result.err);
  REQUIRE(result.exit_code == 0);
  CHECK(result.out.empty());
  const std::string page = read_text(dir.file("page.html"));
  const std::string start = "<script type=\"application/json\" id=\"attn-data\">";
  const size_t at = page.find(start);
  REQUIRE(at != std::string::npos);
  const size_t from = at + start.size();
  const json data = json::parse(page.substr(from, page.find("</script>", from) - from));
  CHECK(served_weights(data) == dumped_weights(dir, valid[0], ""));
  check_refused(run_program(dir, "attn-dump-attention",
                            "--model " + quoted(trained_run().run) + " --src " + quoted(dir.file("pair.src")) +
                                " --html x.html --out y.csv"),
                "--out");
}
