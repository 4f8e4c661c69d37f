#include "io/json_depth.h"

#include "core/check.h"

namespace attn::io {

nlohmann::json::parser_callback_t json_depth_limit(const std::string& source) {
  return [source](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    ATTN_CHECK(depth <= kMaxJsonDepth, source, ": JSON nested deeper than ", kMaxJsonDepth, " levels");
    return true;
  };
}

}  // namespace attn::io
