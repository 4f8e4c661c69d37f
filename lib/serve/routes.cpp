#include "serve/routes.h"

namespace attn::serve {

void set_json(HttpResponse& response, int status, const nlohmann::json& body) {
  response.status = status;
  response.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  response.content_type = "application/json";
}

void set_error(HttpResponse& response, int status, const std::string& message) {
  set_json(response, status, {{"error", message}});
}

}  // namespace attn::serve
