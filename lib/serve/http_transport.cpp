#include "serve/http_transport.h"

#include <algorithm>
#include <map>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unordered_map>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include "core/check.h"
#include "serve/http_connection.h"
#include "serve/multipart_form.h"
#include "serve/sentence_queue.h"
#include "serve/translate_request.h"
#include "serve/worker_pool.h"

namespace attn::serve {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

// Descriptors kept for the rest of the process (model files, logs, the listening socket) when
// the connection cap follows the descriptor limit.
constexpr int64_t kReservedDescriptors = 128;
constexpr int64_t kMostConnections = 1 << 20;
// After accept() failed (out of descriptors): the wait before the next try, which would
// otherwise fail at once, again and again, on the same pending connection.
constexpr std::chrono::milliseconds kAcceptRetry{100};

// Raises RLIMIT_NOFILE's soft limit to its hard limit (idle connections are cheap, each costs a
// descriptor); returns the soft limit in force.
int64_t raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1024;
  if (limit.rlim_cur < limit.rlim_max) {
    const rlim_t before = limit.rlim_cur;
    limit.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) limit.rlim_cur = before;
  }
  return limit.rlim_cur == RLIM_INFINITY ? kMostConnections : int64_t(limit.rlim_cur);
}

int connection_cap(int asked, int64_t descriptors) {
  if (asked > 0) return asked;
  return int(std::clamp(descriptors - kReservedDescriptors, int64_t(1), kMostConnections));
}

ConnectionLimits connection_limits(const ServerOptions& options) {
  ConnectionLimits limits;
  limits.header_timeout = options.header_timeout;
  limits.body_timeout = options.body_timeout;
  limits.write_timeout = options.write_timeout;
  limits.max_header_bytes = uint32_t(options.max_header_bytes);
  limits.max_body_bytes = uint64_t(options.max_body_bytes);
  return limits;
}

// A connection over the cap: a 503 written at once (the socket's send buffer is empty) and closed.
void refuse_connection(tcp::socket& socket, int cap) {
  HttpResponse response;
  set_error(response, 503,
            "Service unavailable: the server has its most connections open (--max-connections " + std::to_string(cap) +
                "); try again shortly");
  const std::string text =
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
      "Connection: close\r\nContent-Length: " +
      std::to_string(response.body.size()) + "\r\n\r\n" + response.body;
  (void)::send(socket.native_handle(), text.data(), text.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  beast::error_code ignored;
  socket.shutdown(tcp::socket::shutdown_send, ignored);
  socket.close(ignored);
}

HttpRequest request_of(const std::shared_ptr<HttpConnection>& connection, BeastRequest& message) {
  HttpRequest request;
  const beast::string_view content_type = message[http::field::content_type];
  request.content_type.assign(content_type.data(), content_type.size());
  request.body = std::move(message.body());
  if (is_multipart_form(request.content_type)) {
    request.multipart = true;
    request.parts = parse_multipart_form(request.body, multipart_boundary(request.content_type));
  }
  request.remote_addr = connection->remote_address();
  request.client_gone = [connection] { return connection->client_gone(); };
  return request;
}

}  // namespace

struct HttpTransport::Impl final : ConnectionOwner {
  const ServerOptions& options;
  Metrics& metrics;
  const ConnectionLimits limits;
  std::map<std::string, Handler> get_routes, post_routes;
  int max_connections = 0;
  // Io-thread state: the acceptor, its retry timer, the open connections.
  net::io_context io{1};
  tcp::acceptor acceptor{io};
  net::steady_timer accept_retry{io};
  std::unordered_map<HttpConnection*, std::weak_ptr<HttpConnection>> connections;
  // Last: destroyed first, so no handler runs once the rest is gone.
  WorkerPool workers;

  Impl(const ServerOptions& server_options, Metrics& server_metrics)
      : options(server_options),
        metrics(server_metrics),
        limits(connection_limits(options)),
        max_connections(connection_cap(options.max_connections, raise_descriptor_limit())),
        workers(options.http_threads) {}

  void accept() {
    acceptor.async_accept(net::make_strand(io), [this](beast::error_code error, tcp::socket socket) {
      if (!acceptor.is_open()) return;  // stopped
      if (error) return retry_accept(error);
      admit(std::move(socket));
      accept();
    });
  }

  void retry_accept(const beast::error_code& error) {
    spdlog::warn("HTTP: cannot accept a connection: {}; trying again in {} ms", error.message(), kAcceptRetry.count());
    accept_retry.expires_after(kAcceptRetry);
    accept_retry.async_wait([this](beast::error_code waited) {
      if (!waited && acceptor.is_open()) accept();
    });
  }

  void admit(tcp::socket socket) {
    if (int(connections.size()) >= max_connections) {
      refuse_connection(socket, max_connections);
      metrics.connection_refused();
      return;
    }
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    auto connection = std::make_shared<HttpConnection>(std::move(socket), limits, *this);
    connections.emplace(connection.get(), connection);
    metrics.set_open_connections(int64_t(connections.size()));
    connection->start();
  }

  void stop_accepting() {
    beast::error_code ignored;
    acceptor.close(ignored);
    accept_retry.cancel();
    const auto open = connections;  // stop() may close, and so erase, a connection
    for (const auto& [raw, weak] : open)
      if (const std::shared_ptr<HttpConnection> connection = weak.lock()) connection->stop();
  }

  // ConnectionOwner: the request goes to a worker; the io context keeps running until it is answered.
  void request_read(std::shared_ptr<HttpConnection> connection, BeastRequest message) override {
    auto work = std::make_shared<net::executor_work_guard<net::io_context::executor_type>>(io.get_executor());
    workers.post([this, connection = std::move(connection), message = std::move(message), work]() mutable {
      connection->answer(respond(connection, message));
    });
  }
  void refused(const std::string& path, int status) override { metrics.request_done(path, status, 0.0); }
  void timed_out(RequestPhase phase) override { metrics.connection_timed_out(phase); }
  void closed(HttpConnection& connection) override {
    connections.erase(&connection);
    metrics.set_open_connections(int64_t(connections.size()));
  }

  // The handler of `method` on `path`; HttpError 404 for a path of no route, 405 for another method's.
  const Handler& route(http::verb method, const std::string& path) const {
    const bool get = method == http::verb::get || method == http::verb::head;
    if (get || method == http::verb::post) {
      const auto& routes = get ? get_routes : post_routes;
      const auto found = routes.find(path);
      if (found != routes.end()) return found->second;
    }
    if (get_routes.count(path) || post_routes.count(path))
      throw HttpError(405, "Method not allowed: " + path + " takes " + (get_routes.count(path) ? "GET" : "POST"));
    throw HttpError(404, "Not found");
  }

  // Runs on a worker: the route's answer, its errors as {"error": ...} with their status, and its count.
  HttpResponse respond(const std::shared_ptr<HttpConnection>& connection, BeastRequest& message) {
    const auto start = Clock::now();
    const std::string path = request_path(message.target());
    HttpResponse response;
    try {
      const Handler& handler = route(message.method(), path);
      handler(request_of(connection, message), response);
    } catch (const HttpError& error) {
      set_error(response, error.status(), error.what());
    } catch (const QueueFull& error) {
      set_error(response, 503, std::string("Service unavailable: ") + error.what() + "; try again shortly");
      response.headers.emplace_back("Retry-After", "1");
    } catch (const std::exception& error) {
      spdlog::error("{}: {}", path, error.what());
      set_error(response, 500, error.what());
    }
    metrics.request_done(path, response.status, std::chrono::duration<double>(Clock::now() - start).count());
    return response;
  }
};

HttpTransport::HttpTransport(const ServerOptions& options, Metrics& metrics)
    : impl_(std::make_unique<Impl>(options, metrics)) {}

HttpTransport::~HttpTransport() = default;

void HttpTransport::get(const std::string& path, Handler handler) {
  impl_->metrics.add_endpoint(path);
  impl_->get_routes[path] = std::move(handler);
}

void HttpTransport::post(const std::string& path, Handler handler) {
  impl_->metrics.add_endpoint(path);
  impl_->post_routes[path] = std::move(handler);
}

int HttpTransport::max_connections() const { return impl_->max_connections; }

int HttpTransport::bind() {
  const ServerOptions& o = impl_->options;
  const std::string where = o.host + ":" + std::to_string(o.port);
  beast::error_code error;
  tcp::resolver resolver(impl_->io);
  const auto endpoints = resolver.resolve(o.host, std::to_string(o.port), tcp::resolver::passive, error);
  ATTN_CHECK(!error && !endpoints.empty(), "cannot listen on ", where, ": ", error.message(), " (--host, --port)");
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  tcp::acceptor& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), error);
  if (!error) acceptor.set_option(tcp::acceptor::reuse_address(true), error);
  if (!error) acceptor.bind(endpoint, error);
  ATTN_CHECK(error != net::error::address_in_use, "cannot listen on ", where,
             ": the port is in use by another process; choose another with --port (0: any free port)");
  if (!error) acceptor.listen(SOMAXCONN, error);
  ATTN_CHECK(!error, "cannot listen on ", where, ": ", error.message(), " (--host, --port)");
  spdlog::info("HTTP: up to {} connections open, {} requests handled at once", impl_->max_connections,
               std::max(1, o.http_threads));
  return acceptor.local_endpoint().port();
}

void HttpTransport::listen() {
  net::post(impl_->io, [impl = impl_.get()] { impl->accept(); });
  impl_->io.run();
}

void HttpTransport::stop() {
  net::post(impl_->io, [impl = impl_.get()] { impl->stop_accepting(); });
}

}  // namespace attn::serve
