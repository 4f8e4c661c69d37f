#include "io/config_value.h"

#include <vector>

#include "core/check.h"
#include "io/config_reader.h"

namespace attn::io {

nlohmann::json config_value(const Config& config, const std::string& key) {
  nlohmann::json value = config_to_json(config);
  std::string path;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    const std::string name = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const std::string here = join_key(path, name);
    ATTN_CHECK(value.is_object(), "config key ", path, " is a value, not a section; there is no ", key);
    if (!value.contains(name)) {
      std::vector<std::string> known;
      for (const auto& item : value.items()) known.push_back(item.key());
      const std::string suggestion = closest_match(name, known);
      throw Error("unknown config key " + here +
                  (suggestion.empty() ? std::string() : "; did you mean " + join_key(path, suggestion) + "?"));
    }
    value = value.at(name);
    path = here;
    if (dot == std::string::npos) return value;
    start = dot + 1;
  }
}

std::string config_value_text(const Config& config, const std::string& key) {
  const nlohmann::json value = config_value(config, key);
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace attn::io
