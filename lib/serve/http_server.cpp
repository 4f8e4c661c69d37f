#include "serve/http_server.h"

#include <atomic>

#include "serve/explorer_api.h"
#include "serve/http_transport.h"
#include "serve/libretranslate_api.h"
#include "serve/metrics.h"
#include "serve/native_api.h"

namespace attn::serve {

// Members in the order they are built: the queue (in service) reports to metrics, and the
// transport's routes call service.
struct HttpServer::Impl {
  ServerOptions options;
  Metrics metrics;
  TranslationService service{options};
  HttpTransport transport{options, metrics};
  std::atomic<bool> stopping{false};
  std::atomic<AttentionBackend*> attention{nullptr};

  explicit Impl(ServerOptions server_options) : options(std::move(server_options)) {
    add_libretranslate_api(transport, service);
    add_native_api(transport, service);
    add_explorer_api(transport, service, attention, options.max_attention_bytes);
    transport.get("/health", [this](const HttpRequest&, HttpResponse& response) { health(response); });
    transport.get("/metrics", [this](const HttpRequest&, HttpResponse& response) {
      response.body = metrics.prometheus_text(service.queue_depth());
      response.content_type = "text/plain; version=0.0.4";
    });
  }

  void health(HttpResponse& response) const {
    if (stopping)
      set_json(response, 503, {{"status", "stopping"}});
    else if (!service.ready())
      set_json(response, 503, {{"status", "loading"}});
    else
      set_json(response, 200, {{"status", "ok"}});
  }
};

HttpServer::HttpServer(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpServer::~HttpServer() { impl_->service.close(); }

int HttpServer::bind() { return impl_->transport.bind(); }

void HttpServer::listen() { impl_->transport.listen(); }

void HttpServer::stop() {
  impl_->stopping = true;
  impl_->transport.stop();
}

void HttpServer::set_backend(BatchBackend& backend, ModelInfo info, AttentionBackend* attention) {
  impl_->attention = attention;  // before the service is ready: a request that sees it ready sees this
  impl_->service.start(backend, std::move(info), &impl_->metrics);
}

void HttpServer::close() { impl_->service.close(); }

}  // namespace attn::serve
