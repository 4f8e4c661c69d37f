// The HTTP transport against hostile and unusual clients, in-process over the fake backend:
// idle and slowloris connections cost a normal client nothing and are closed at their
// deadlines; pipelined requests are answered in order; every body (chunked or not, JSON or
// form) is bounded by --max-body-bytes alone, and the head by --max-header-bytes; connections
// over the cap are refused; stop() does not wait for idle connections. Timing bounds are
// generous: these tests run on loaded machines.
#include <algorithm>
#include <arpa/inet.h>
#include <chrono>
#include <cstdio>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <catch2/catch.hpp>

#include "serve/fake_server.h"
#include "skip.h"
#include "wait_until.h"

using namespace attn::testing;
using Catch::Contains;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
namespace net = boost::asio;
namespace http = boost::beast::http;

namespace {

// A connected socket to 127.0.0.1:port (blocking), or -1.
int connect_to(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(uint16_t(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

// Whether the server has closed `fd` (end of stream or reset); reads nothing when it has not.
bool closed_by_server(int fd) {
  pollfd poll_fd{fd, POLLIN | POLLRDHUP, 0};
  if (poll(&poll_fd, 1, 0) <= 0) return false;
  char byte;
  const ssize_t got = recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

// Seconds until every socket of `fds` is closed by the server (at most `seconds`; then -1).
double seconds_until_all_closed(const std::vector<int>& fds, double seconds) {
  const auto start = Clock::now();
  const bool all = wait_until(
      [&] {
        for (const int fd : fds)
          if (!closed_by_server(fd)) return false;
        return true;
      },
      seconds);
  return all ? std::chrono::duration<double>(Clock::now() - start).count() : -1;
}

void close_all(std::vector<int>& fds) {
  for (const int fd : fds) close(fd);
  fds.clear();
}

// Many descriptors in this process (the server's ends and the test's); the server raised the
// soft limit to the hard one.
bool descriptors_for(int sockets) {
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  return limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur > rlim_t(2 * sockets + 200);
}

std::string translate_body(const std::string& q) { return json{{"q", q}, {"source", "en"}, {"target", "it"}}.dump(); }

std::string post_request(const std::string& path, const std::string& body,
                         const std::string& type = "application/json") {
  return "POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " + type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

using Response = http::response<http::string_body>;

// A client on one connection that writes raw bytes and reads whole responses in order.
class RawClient {
 public:
  explicit RawClient(int port) : socket_(io_) {
    socket_.connect({net::ip::make_address("127.0.0.1"), uint16_t(port)});
    const timeval timeout{20, 0};  // no read may hang the test
    setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  }
  void write(const std::string& bytes) { net::write(socket_, net::buffer(bytes)); }
  Response read() {
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 << 20);
    http::read(socket_, buffer_, parser);
    return parser.release();
  }
  // The error of the next read, once the server closed the connection.
  boost::beast::error_code read_error() {
    Response response;
    boost::beast::error_code error;
    http::read(socket_, buffer_, response, error);
    return error;
  }
  std::string error_of(const Response& response) { return json::parse(response.body()).at("error"); }

 private:
  net::io_context io_;
  net::ip::tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

// A one-sentence /translate on a new connection: its answer, and how long it took.
std::pair<std::string, double> timed_translation(int port, const std::string& q) {
  const auto start = Clock::now();
  RawClient client(port);
  client.write(post_request("/translate", translate_body(q)));
  const Response response = client.read();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  CHECK(response.result_int() == 200);
  return {json::parse(response.body()).value("translatedText", ""), seconds};
}

double metric(RunningServer& running, const std::string& name) {
  RawClient client(running.port);
  client.write("GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string text = client.read().body();
  const size_t at = text.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stod(text.substr(at + name.size() + 2));
}

}  // namespace

TEST_CASE("500 idle connections: a normal request is answered at once - they close at the header deadline",
          "[serve][http]") {
  attn::serve::ServerOptions options = small_limits();
  options.header_timeout = std::chrono::seconds(3);
  options.http_threads = 4;  // a thread per connection would be starved many times over
  RunningServer running(options);
  ATTN_SKIP_UNLESS(descriptors_for(500), "the descriptor limit is below 1200");
  std::vector<int> idle;
  for (int i = 0; i < 500; ++i) idle.push_back(connect_to(running.port));
  CHECK(std::count(idle.begin(), idle.end(), -1) == 0);
  const auto [text, seconds] = timed_translation(running.port, "ab");
  CHECK(text == "ba");
  CHECK(seconds < 2);  // before the idle connections' deadline: they held nothing
  const double closed_after = seconds_until_all_closed(idle, 10);
  CHECK(closed_after >= 0);
  CHECK(metric(running, "attn_http_connections_timed_out_total{phase=\"idle\"}") >= 500);
  close_all(idle);
}

TEST_CASE("100 slowloris connections (a byte every 200 ms) close at the 1 s header deadline", "[serve][http]") {
  attn::serve::ServerOptions options = small_limits();
  options.header_timeout = std::chrono::seconds(1);
  options.http_threads = 4;
  RunningServer running(options);
  std::vector<int> slow;
  for (int i = 0; i < 100; ++i) slow.push_back(connect_to(running.port));
  const auto start = Clock::now();
  // Headers that never end, one byte at a time: an inactivity timer would never fire.
  const std::string head = "POST /translate HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  std::vector<double> closed_at(slow.size(), -1);
  bool normal_answered = false;
  for (size_t step = 0; step < head.size(); ++step) {
    for (size_t i = 0; i < slow.size(); ++i) {
      if (closed_at[i] >= 0) continue;
      if (closed_by_server(slow[i]) || send(slow[i], &head[step], 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
        closed_at[i] = std::chrono::duration<double>(Clock::now() - start).count();
    }
    if (step == 2) {  // amid the trickle
      const auto [text, seconds] = timed_translation(running.port, "cd");
      normal_answered = text == "dc" && seconds < 2;
    }
    if (std::count(closed_at.begin(), closed_at.end(), -1.0) == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  CHECK(normal_answered);
  CHECK(std::count(closed_at.begin(), closed_at.end(), -1.0) == 0);
  const double last = *std::max_element(closed_at.begin(), closed_at.end());
  CHECK(last >= 0.9);
  CHECK(last < 5);  // the deadline is 1 s; the rest is a loaded machine's slack
  close_all(slow);
}

TEST_CASE("slow bodies close at the body deadline", "[serve][http]") {
  attn::serve::ServerOptions options = small_limits();
  options.body_timeout = std::chrono::seconds(1);
  RunningServer running(options);
  std::vector<int> slow;
  for (int i = 0; i < 20; ++i) {
    slow.push_back(connect_to(running.port));
    const std::string head = "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n";
    REQUIRE(send(slow.back(), head.data(), head.size(), MSG_NOSIGNAL) == ssize_t(head.size()));
  }
  const auto start = Clock::now();
  bool all_closed = false;
  while (!all_closed && Clock::now() - start < std::chrono::seconds(8)) {
    all_closed = true;
    for (const int fd : slow)
      if (!closed_by_server(fd)) {
        all_closed = false;
        (void)send(fd, "{", 1, MSG_NOSIGNAL | MSG_DONTWAIT);
      }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  CHECK(all_closed);
  CHECK(metric(running, "attn_http_connections_timed_out_total{phase=\"body\"}") == 20);
  close_all(slow);
}

TEST_CASE("pipelined requests are answered in order - also after a refusal", "[serve][http]") {
  RunningServer running(small_limits());
  RawClient client(running.port);
  // Two in one write.
  client.write(post_request("/translate", translate_body("ab")) + "GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(json::parse(client.read().body()) == json{{"translatedText", "ba"}});
  CHECK(json::parse(client.read().body()) == json{{"status", "ok"}});
  // Several, each a sentence of its own.
  std::string several;
  for (int i = 0; i < 6; ++i) several += post_request("/translate", translate_body("s" + std::to_string(i)));
  client.write(several);
  for (int i = 0; i < 6; ++i) {
    const Response response = client.read();
    CHECK(response.result_int() == 200);
    CHECK(json::parse(response.body())["translatedText"] == std::to_string(i) + "s");
  }
  // A 400, a 404 and a 405 do not end the connection.
  client.write(post_request("/translate", "{") + "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n" +
               "GET /translate HTTP/1.1\r\nHost: x\r\n\r\n" + post_request("/translate", translate_body("xy")));
  const Response bad = client.read();
  CHECK(bad.result_int() == 400);
  CHECK_THAT(client.error_of(bad), Contains("not valid JSON"));
  CHECK(client.read().result_int() == 404);
  const Response method = client.read();
  CHECK(method.result_int() == 405);
  CHECK_THAT(client.error_of(method), Contains("/translate takes POST"));
  CHECK(json::parse(client.read().body())["translatedText"] == "yx");
}

TEST_CASE("chunked bodies: translated under --max-body-bytes - 413 naming the flag over it", "[serve][http]") {
  RunningServer running(small_limits());  // --max-body-bytes 4096
  const auto chunked = [](const std::vector<std::string>& chunks) {
    std::string request =
        "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    char size[32];
    for (const std::string& chunk : chunks) {
      std::snprintf(size, sizeof(size), "%zx\r\n", chunk.size());
      request += size + chunk + "\r\n";
    }
    return request + "0\r\n\r\n";
  };
  RawClient client(running.port);
  const std::string body = translate_body("abc");
  client.write(chunked({body.substr(0, 5), body.substr(5)}));
  const Response translated = client.read();
  CHECK(translated.result_int() == 200);
  CHECK(json::parse(translated.body())["translatedText"] == "cba");
  // Chunks of 1000 bytes, 5000 in all.
  client.write(chunked(std::vector<std::string>(5, std::string(1000, ' '))));
  const Response refused = client.read();
  CHECK(refused.result_int() == 413);
  CHECK_THAT(client.error_of(refused), Contains("--max-body-bytes 4096"));
  CHECK_THAT(client.error_of(refused), Contains("over 4096 bytes"));
  CHECK(client.read_error());  // the connection is closed after a 413
}

TEST_CASE("form bodies of 100 KiB under a 1 MiB limit: accepted - the request's own limits still apply",
          "[serve][http]") {
  attn::serve::ServerOptions options = small_limits();
  options.max_body_bytes = 1 << 20;
  options.limits = {0, 0};  // no character or sentence limit
  RunningServer running(options);
  const std::string q(100 << 10, 'a');
  auto client = running.client();
  auto form = client.Post("/translate", "q=" + q + "&source=en&target=it", "application/x-www-form-urlencoded");
  REQUIRE(form);
  CHECK(form->status == 200);
  CHECK(json::parse(form->body)["translatedText"] == q);
  const httplib::MultipartFormDataItems items = {
      {"q", q + "b", "", ""}, {"source", "en", "", ""}, {"target", "it", "", ""}};
  auto multipart = client.Post("/translate", items);
  REQUIRE(multipart);
  CHECK(multipart->status == 200);
  CHECK(json::parse(multipart->body)["translatedText"] == "b" + q);
  // The same form on a server with a character limit: its own 400, not a size refusal.
  attn::serve::ServerOptions limited = options;
  limited.limits = {1000, 0};
  RunningServer small(limited);
  auto limited_client = small.client();
  auto refused = limited_client.Post("/translate", items);
  REQUIRE(refused);
  CHECK(refused->status == 400);
  CHECK_THAT(refused->body, Contains("exceeds text limit (1000)"));
  // A multipart body without its final boundary.
  RawClient raw(small.port);
  raw.write(post_request("/translate", "--XyZ\r\nContent-Disposition: form-data; name=\"q\"\r\n\r\nab\r\n--XyZ",
                         "multipart/form-data; boundary=XyZ"));
  const Response unfinished = raw.read();
  CHECK(unfinished.result_int() == 400);
  CHECK_THAT(raw.error_of(unfinished), Contains("ends before its final boundary"));
}

TEST_CASE("a head over --max-header-bytes gets 431 naming the flag", "[serve][http]") {
  attn::serve::ServerOptions options = small_limits();
  options.max_header_bytes = 4096;
  RunningServer running(options);
  RawClient client(running.port);
  client.write("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(5000, 'b') + "\r\n\r\n");
  const Response refused = client.read();
  CHECK(refused.result_int() == 431);
  CHECK_THAT(client.error_of(refused), Contains("--max-header-bytes 4096"));
  // A head under the bound is served.
  RawClient fine(running.port);
  fine.write("GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(3000, 'b') + "\r\n\r\n");
  CHECK(fine.read().result_int() == 200);
}

TEST_CASE("Expect: 100-continue gets its interim answer before the body is sent", "[serve][http]") {
  RunningServer running(small_limits());
  RawClient client(running.port);
  const std::string body = translate_body("ab");
  client.write(
      "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n");
  CHECK(client.read().result_int() == 100);
  client.write(body);
  CHECK(json::parse(client.read().body())["translatedText"] == "ba");
}

TEST_CASE("connections over --max-connections get 503 - existing ones are served", "[serve][http]") {
  attn::serve::ServerOptions options = small_limits();
  options.max_connections = 8;
  RunningServer running(options);
  RawClient kept(running.port);  // one of the 8, with a request to make later
  std::vector<int> idle;
  for (int i = 0; i < 7; ++i) idle.push_back(connect_to(running.port));
  RawClient over(running.port);  // accepted after the 8, in order
  const Response refused = over.read();
  CHECK(refused.result_int() == 503);
  CHECK_THAT(over.error_of(refused), Contains("--max-connections 8"));
  kept.write(post_request("/translate", translate_body("ab")));
  CHECK(json::parse(kept.read().body())["translatedText"] == "ba");
  // Once connections close, new ones are served again.
  close_all(idle);
  CHECK(wait_until(
      [&] {
        RawClient fresh(running.port);
        fresh.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
        return fresh.read().result_int() == 200;
      },
      10));
  CHECK(metric(running, "attn_http_connections_refused_total") >= 1);
}

TEST_CASE("stop() does not wait for idle connections", "[serve][http]") {
  attn::serve::ServerOptions options = small_limits();
  options.header_timeout = std::chrono::seconds(60);
  auto running = std::make_unique<RunningServer>(options);
  std::vector<int> idle;
  for (int i = 0; i < 10; ++i) idle.push_back(connect_to(running->port));
  RawClient kept(running->port);  // a kept connection after an answer
  kept.write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(kept.read().result_int() == 200);
  const auto start = Clock::now();
  running.reset();  // stop, join, close
  CHECK(std::chrono::duration<double>(Clock::now() - start).count() < 10);
  CHECK(seconds_until_all_closed(idle, 1) >= 0);
  close_all(idle);
}
