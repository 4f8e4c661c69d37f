#include "serve/http_transport.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <thread>

#include "core/check.h"
#include "serve/client_socket.h"

namespace attn::serve {

using Clock = std::chrono::steady_clock;

namespace {

// The refusals httplib makes itself, in words.
std::string reason(int status) {
  switch (status) {
    case 400:
      return "Bad request";
    case 404:
      return "Not found";
    case 405:
      return "Method not allowed";
    case 408:
      return "Request timeout";
    case 413:
      return "Payload too large";
    case 414:
      return "URI too long";
    case 416:
      return "Range not satisfiable";
    default:
      return "HTTP status " + std::to_string(status);
  }
}

// Whether the client of `req` has left. httplib 0.11 neither tells a handler that its client
// left nor gives it the socket: the socket is found once, on the first call, among the process'
// descriptors by the connection's addresses (client_socket.h), then polled.
std::function<bool()> client_watch(const httplib::Request& req) {
  return [local = req.local_addr, local_port = req.local_port, remote = req.remote_addr, remote_port = req.remote_port,
          socket = -2]() mutable {
    if (socket == -2) socket = connection_socket(local, local_port, remote, remote_port);
    return socket >= 0 && peer_closed(socket);
  };
}

HttpRequest request_of(const httplib::Request& req) {
  HttpRequest request;
  request.body = req.body;
  request.content_type = req.get_header_value("Content-Type");
  request.multipart = req.is_multipart_form_data();
  for (const auto& [name, part] : req.files) request.parts.emplace_back(name, part.content);
  request.remote_addr = req.remote_addr;
  request.client_gone = client_watch(req);
  return request;
}

void answer(const HttpResponse& response, httplib::Response& res) {
  res.status = response.status;
  for (const auto& [name, value] : response.headers) res.set_header(name, value);
  res.set_content(response.body, response.content_type);
}

}  // namespace

struct HttpTransport::Impl {
  const ServerOptions& options;
  Metrics& metrics;
  httplib::Server http;
  std::atomic<bool> listen_returned{false};
  int listening_socket = -1;

  Impl(const ServerOptions& server_options, Metrics& server_metrics)
      : options(server_options), metrics(server_metrics) {
    const int threads = std::max(1, options.http_threads);
    http.new_task_queue = [threads] { return new httplib::ThreadPool(size_t(threads)); };
    http.set_read_timeout(options.read_timeout.count());
    http.set_write_timeout(options.write_timeout.count());
    http.set_keep_alive_timeout(std::min<time_t>(5, options.read_timeout.count()));
    http.set_payload_max_length(size_t(options.max_body_bytes));
    // Debian's httplib is built with a listen backlog of 5: a burst of connections beyond it is
    // dropped (clients see a read error). The socket is kept so bind() can widen the backlog.
    http.set_socket_options([this](socket_t socket) {
      int yes = 1;
      setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
      listening_socket = socket;
    });
    http.set_error_handler(httplib::Server::HandlerWithResponse(
        [this](const httplib::Request& req, httplib::Response& res) { return refusal(req, res); }));
  }

  // httplib's own refusals (413, 404, a malformed request line) get the routes' error body too.
  httplib::Server::HandlerResponse refusal(const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;  // a route's error
    std::string message = reason(res.status);
    if (res.status == 413) message += ": the body is over " + std::to_string(options.max_body_bytes) + " bytes";
    HttpResponse response;
    set_error(response, res.status, message);
    answer(response, res);
    metrics.request_done(req.path, res.status, 0.0);  // a path of no route counts as "other"
    return httplib::Server::HandlerResponse::Handled;
  }

  // Every route: its errors as {"error": ...} with their status, and its metrics.
  httplib::Server::Handler endpoint(std::string name, Handler handler) {
    return [this, name, handler = std::move(handler)](const httplib::Request& req, httplib::Response& res) {
      const auto start = Clock::now();
      HttpResponse response;
      try {
        handler(request_of(req), response);
      } catch (const HttpError& error) {
        set_error(response, error.status(), error.what());
      } catch (const QueueFull& error) {
        set_error(response, 503, std::string("Service unavailable: ") + error.what() + "; try again shortly");
        response.headers.emplace_back("Retry-After", "1");
      } catch (const std::exception& error) {
        spdlog::error("{}: {}", name, error.what());
        set_error(response, 500, error.what());
      }
      answer(response, res);
      metrics.request_done(name, res.status, std::chrono::duration<double>(Clock::now() - start).count());
    };
  }
};

HttpTransport::HttpTransport(const ServerOptions& options, Metrics& metrics)
    : impl_(std::make_unique<Impl>(options, metrics)) {}

HttpTransport::~HttpTransport() = default;

void HttpTransport::get(const std::string& path, Handler handler) {
  impl_->metrics.add_endpoint(path);
  impl_->http.Get(path, impl_->endpoint(path, std::move(handler)));
}

void HttpTransport::post(const std::string& path, Handler handler) {
  impl_->metrics.add_endpoint(path);
  impl_->http.Post(path, impl_->endpoint(path, std::move(handler)));
}

int HttpTransport::bind() {
  const ServerOptions& o = impl_->options;
  errno = 0;
  int port = o.port;
  if (o.port == 0)
    port = impl_->http.bind_to_any_port(o.host);
  else if (!impl_->http.bind_to_port(o.host, o.port))
    port = -1;
  const int error = errno;
  ATTN_CHECK(port > 0 || error != EADDRINUSE, "cannot listen on ", o.host, ":", o.port,
             ": the port is in use by another process; choose another with --port (0: any free port)");
  ATTN_CHECK(port > 0, "cannot listen on ", o.host, ":", o.port, error ? std::string(": ") + std::strerror(error) : "",
             " (--host, --port)");
  // listen() again on a listening socket only sets its backlog (Linux).
  if (impl_->listening_socket >= 0) ::listen(impl_->listening_socket, SOMAXCONN);
  return port;
}

void HttpTransport::listen() {
  impl_->http.listen_after_bind();
  impl_->listen_returned = true;
}

void HttpTransport::stop() {
  // httplib's stop() does nothing before its listen loop runs: wait for it (or for its end).
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!impl_->http.is_running() && !impl_->listen_returned && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  impl_->http.stop();
}

}  // namespace attn::serve
