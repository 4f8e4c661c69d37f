#pragma once
// What an API dialect sees of HTTP: a request and a response of serve's own, and the routes it
// registers with the transport (serve/http_transport.h). No Beast or Asio type crosses this line,
// so the dialects (libretranslate_api.h, native_api.h) stay as they are when the transport
// changes.
//
//   void add_my_api(Routes& routes, TranslationService& service) {
//     routes.post("/v1/thing", [&service](const HttpRequest& request, HttpResponse& response) {
//       set_json(response, 200, {{"ok", true}});   // or throw HttpError(status, message)
//     });
//   }
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace attn::serve {

struct HttpRequest {
  std::string body, content_type;
  // multipart/form-data: the body's parts (name, content) in order (serve/multipart_form.h;
  // a malformed form is refused with 400 before the handler runs); the body itself is not read.
  bool multipart = false;
  std::vector<std::pair<std::string, std::string>> parts;
  std::string remote_addr;  // the client's address (the rate limit's key without an API key)
  // Whether the client has closed its connection (the transport polls the connection's socket
  // without reading from it): a waiting request then gives up.
  std::function<bool()> client_gone = [] { return false; };
};

struct HttpResponse {
  int status = 200;
  std::string body, content_type;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type
};

// A route's work. It answers by filling the response, or refuses by throwing HttpError
// (translate_request.h) or QueueFull (sentence_queue.h): the transport turns those into
// {"error": ...} answers with their status, and counts every answer in /metrics.
using Handler = std::function<void(const HttpRequest&, HttpResponse&)>;

// The transport's side of registration: one handler per method and path (the path is also the
// endpoint's name in /metrics).
class Routes {
 public:
  virtual ~Routes() = default;
  virtual void get(const std::string& path, Handler handler) = 0;
  virtual void post(const std::string& path, Handler handler) = 0;
};

// `body` as application/json (invalid UTF-8 replaced, never thrown on).
void set_json(HttpResponse& response, int status, const nlohmann::json& body);
// {"error": message}: every refusal's body, as LibreTranslate gives it.
void set_error(HttpResponse& response, int status, const std::string& message);

}  // namespace attn::serve
