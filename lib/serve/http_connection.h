#pragma once
// One client connection of attn-serve's HTTP transport (http_transport.h), on Boost.Beast: reads
// requests under a deadline for the head and one for the body, hands each complete request to
// its owner, writes the answer the owner gives back (from any thread), then reads the next
// request (pipelined requests are answered in order, one at a time). Refuses by itself what the
// parser refuses (a head over --max-header-bytes: 431, a body over --max-body-bytes, chunked or
// not: 413, bad syntax: 400), and closes a connection whose deadline passed without an answer.
// Every step runs on the connection's strand of the transport's io thread; only answer() and
// client_gone() are called from the worker that handles a request.
//
//   owner.request_read(connection, request)  ->  worker: ... connection->answer(response)
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "serve/metrics.h"
#include "serve/routes.h"

namespace attn::serve {

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;

// A connection's deadlines and sizes (ServerOptions' of the same names).
struct ConnectionLimits {
  std::chrono::seconds header_timeout{}, body_timeout{}, write_timeout{};
  uint32_t max_header_bytes = 0;
  uint64_t max_body_bytes = 0;
};

// A request target's path: what comes before its query or fragment.
std::string request_path(boost::beast::string_view target);

class HttpConnection;

// The transport's side of its connections (called on the io thread).
class ConnectionOwner {
 public:
  virtual ~ConnectionOwner() = default;
  // `request` was read whole; answer it through connection->answer(), from any thread.
  virtual void request_read(std::shared_ptr<HttpConnection> connection, BeastRequest request) = 0;
  // The connection answered `status` itself (`path`: "" when the head could not be read).
  virtual void refused(const std::string& path, int status) = 0;
  // The connection was closed because a request's head or body missed its deadline.
  virtual void timed_out(RequestPhase phase) = 0;
  // The connection is closed; it calls nothing more of its owner.
  virtual void closed(HttpConnection& connection) = 0;
};

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  HttpConnection(boost::asio::ip::tcp::socket socket, const ConnectionLimits& limits, ConnectionOwner& owner);
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Starts reading the first request.
  void start();
  // From any thread, once per request_read: writes `response`, then reads the next request.
  void answer(HttpResponse response);
  // From the worker handling a request: whether the client has closed its connection (or shut
  // down its sending side), read without taking a byte of a pipelined request.
  bool client_gone() const;
  // The server stops: a connection waiting for a request's head closes now; one whose request
  // was read answers it (and closes after).
  void stop();
  const std::string& remote_address() const { return remote_address_; }

 private:
  enum class Phase { head, body, handling, writing, closing };

  void read_head();
  void on_head(boost::beast::error_code error);
  void read_body();
  void on_body(boost::beast::error_code error);
  // The request's head asked for "Expect: 100-continue": the interim answer, then the body.
  void write_continue();
  // A read failed: the client left, a deadline passed (`phase` says which), or the parser refused.
  void read_failed(boost::beast::error_code error, RequestPhase phase);
  void write(HttpResponse response, bool keep_alive);
  // Answers `status` {"error": message} itself and closes after.
  void refuse(int status, const std::string& message);
  // After the last answer: stops sending, reads and drops what the client still sends until it
  // closes or a short deadline passes (closing with unread bytes would reset the connection and
  // could destroy the answer before the client reads it).
  void linger();
  void drain();
  void close();

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  const ConnectionLimits& limits_;
  ConnectionOwner& owner_;
  std::string remote_address_;
  const int socket_;  // the socket's descriptor, for client_gone()
  Phase phase_ = Phase::head;
  // The request being handled: its HTTP version, whether it keeps the connection, whether it
  // is a HEAD (the answer without its body), its path for the owner's counts.
  unsigned version_ = 11;
  bool keep_alive_ = true, head_only_ = false, stopping_ = false, closed_ = false;
  std::string path_;
};

}  // namespace attn::serve
