#include "serve/http_connection.h"

#include <poll.h>
#include <sys/socket.h>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

namespace attn::serve {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace {

// How long a closing connection reads (and drops) what its client still sends.
constexpr std::chrono::seconds kLinger{5};
constexpr size_t kDrainBytes = 4096;

// Whether the peer of connected socket `fd` has closed the connection (or shut down its sending
// side: HTTP clients do not, while they wait for an answer), or it was reset. Reads nothing:
// bytes of a pipelined request stay for the parser.
bool peer_closed(int fd) {
  pollfd poll_fd{fd, POLLIN | POLLRDHUP, 0};
  if (poll(&poll_fd, 1, 0) <= 0) return false;  // nothing happened (or cannot tell: keep serving)
  if (poll_fd.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) return true;
  // Readable: bytes (a pipelined request: the client is there) or end of stream.
  char byte;
  return recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

std::string address_of(const tcp::socket& socket) {
  beast::error_code error;
  const tcp::endpoint peer = socket.remote_endpoint(error);
  return error ? std::string() : peer.address().to_string();
}

bool is_parser_error(const beast::error_code& error) {
  return error.category() == make_error_code(http::error::bad_target).category();
}

}  // namespace

std::string request_path(beast::string_view target) {
  const beast::string_view path = target.substr(0, target.find_first_of("?#"));
  return std::string(path.data(), path.size());
}

HttpConnection::HttpConnection(tcp::socket socket, const ConnectionLimits& limits, ConnectionOwner& owner)
    : stream_(std::move(socket)),
      buffer_(limits.max_header_bytes + kDrainBytes),
      limits_(limits),
      owner_(owner),
      socket_(stream_.socket().native_handle()) {
  remote_address_ = address_of(stream_.socket());
}

void HttpConnection::start() {
  net::dispatch(stream_.get_executor(), [self = shared_from_this()] { self->read_head(); });
}

void HttpConnection::read_head() {
  phase_ = Phase::head;
  path_.clear();
  version_ = 11;
  keep_alive_ = true;
  head_only_ = false;
  parser_.emplace();
  parser_->header_limit(limits_.max_header_bytes);
  parser_->body_limit(limits_.max_body_bytes);
  // One deadline for the whole head (and, on a kept connection, the wait for it): bytes that
  // trickle in do not extend it.
  stream_.expires_after(limits_.header_timeout);
  http::async_read_header(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code error, size_t) { self->on_head(error); });
}

void HttpConnection::on_head(beast::error_code error) {
  if (error) return read_failed(error, RequestPhase::head);
  const BeastRequest& head = parser_->get();
  path_ = request_path(head.target());
  version_ = head.version();
  keep_alive_ = head.keep_alive();
  head_only_ = head.method() == http::verb::head;
  phase_ = Phase::body;
  if (beast::iequals(head[http::field::expect], "100-continue") && !parser_->is_done()) return write_continue();
  read_body();
}

void HttpConnection::write_continue() {
  auto interim = std::make_shared<http::response<http::empty_body>>(http::status::continue_, version_);
  stream_.expires_after(limits_.write_timeout);
  http::async_write(stream_, *interim, [self = shared_from_this(), interim](beast::error_code error, size_t) {
    if (error) return self->close();
    self->read_body();
  });
}

void HttpConnection::read_body() {
  if (parser_->is_done()) return on_body({});
  parser_->eager(true);
  stream_.expires_after(limits_.body_timeout);
  http::async_read(stream_, buffer_, *parser_,
                   [self = shared_from_this()](beast::error_code error, size_t) { self->on_body(error); });
}

void HttpConnection::on_body(beast::error_code error) {
  if (error) return read_failed(error, RequestPhase::body);
  stream_.expires_never();
  phase_ = Phase::handling;
  owner_.request_read(shared_from_this(), parser_->release());
}

void HttpConnection::read_failed(beast::error_code error, RequestPhase phase) {
  if (error == beast::error::timeout) {  // the stream closed the socket
    // A head of which no byte came: the connection was idle (maybe kept after an answer).
    if (!closed_) owner_.timed_out(phase == RequestPhase::head && buffer_.size() == 0 ? RequestPhase::idle : phase);
    return close();
  }
  if (closed_) return;
  if (error == http::error::body_limit)
    return refuse(413, "Payload too large: the body is over " + std::to_string(limits_.max_body_bytes) +
                           " bytes (--max-body-bytes " + std::to_string(limits_.max_body_bytes) + ")");
  if (phase == RequestPhase::head && (error == http::error::header_limit || error == http::error::buffer_overflow))
    return refuse(431, "Request header fields too large: the request line and headers are over " +
                           std::to_string(limits_.max_header_bytes) + " bytes (--max-header-bytes " +
                           std::to_string(limits_.max_header_bytes) + ")");
  // The client left (end_of_stream: between requests; partial_message: within one), or the socket failed.
  if (error == http::error::end_of_stream || error == http::error::partial_message || !is_parser_error(error))
    return close();
  refuse(400, "Bad request: " + error.message());
}

void HttpConnection::refuse(int status, const std::string& message) {
  HttpResponse response;
  set_error(response, status, message);
  owner_.refused(path_, status);
  head_only_ = false;
  write(std::move(response), false);
}

void HttpConnection::answer(HttpResponse response) {
  net::post(stream_.get_executor(), [self = shared_from_this(), response = std::move(response)]() mutable {
    self->write(std::move(response), self->keep_alive_ && !self->stopping_);
  });
}

void HttpConnection::write(HttpResponse response, bool keep_alive) {
  if (closed_) return;
  auto message = std::make_shared<http::response<http::string_body>>();
  message->version(version_);
  message->result(unsigned(response.status));
  message->set(http::field::server, "attn-serve");
  if (!response.content_type.empty()) message->set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) message->insert(name, value);
  message->body() = std::move(response.body);
  message->keep_alive(keep_alive);
  message->prepare_payload();
  if (head_only_) message->body().clear();  // Content-Length stays the GET answer's
  phase_ = Phase::writing;
  stream_.expires_after(limits_.write_timeout);
  http::async_write(stream_, *message,
                    [self = shared_from_this(), message, keep_alive](beast::error_code error, size_t) {
                      if (error) return self->close();
                      if (!keep_alive || self->stopping_) return self->linger();
                      self->read_head();  // a pipelined request may already be in the buffer
                    });
}

void HttpConnection::linger() {
  phase_ = Phase::closing;
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  buffer_.consume(buffer_.size());
  stream_.expires_after(kLinger);
  drain();
}

void HttpConnection::drain() {
  // Read into space never committed: the bytes are dropped.
  stream_.async_read_some(buffer_.prepare(kDrainBytes), [self = shared_from_this()](beast::error_code error, size_t) {
    if (error) return self->close();
    self->drain();
  });
}

bool HttpConnection::client_gone() const {
  // While a request is handled nothing of the io side reads, writes or closes the socket.
  return peer_closed(socket_);
}

void HttpConnection::stop() {
  net::post(stream_.get_executor(), [self = shared_from_this()] {
    self->stopping_ = true;
    if (self->phase_ == Phase::head || self->phase_ == Phase::closing) self->close();
  });
}

void HttpConnection::close() {
  if (closed_) return;
  closed_ = true;
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream_.close();
  owner_.closed(*this);
}

}  // namespace attn::serve
