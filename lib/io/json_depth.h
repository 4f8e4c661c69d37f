#pragma once
// A nesting limit for JSON read from files (configs, checkpoint headers). nlohmann's parser is
// iterative, but dump() (used in error messages) and the config readers recurse: 100,000 '['
// in a hostile file would overflow the stack. Real configs nest 3 levels, headers 3.
#include <string>

#include <nlohmann/json.hpp>

namespace attn::io {

inline constexpr int kMaxJsonDepth = 64;

// A parser callback for nlohmann::json::parse that throws attn::Error("SOURCE: JSON nested
// deeper than 64 levels") as soon as the input goes deeper.
nlohmann::json::parser_callback_t json_depth_limit(const std::string& source);

}  // namespace attn::io
