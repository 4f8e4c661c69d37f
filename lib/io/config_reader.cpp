#include "io/config_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "io/json_depth.h"

namespace attn::io {

using nlohmann::json;

namespace {

// "config key a.b" in messages; the root object has no key of its own.
std::string describe(const std::string& key) { return key.empty() ? "the config" : "config key " + key; }

[[noreturn]] void type_error(const json& j, const std::string& key, const std::string& expected) {
  throw Error(describe(key) + ": expected " + expected + ", got " + j.dump());
}

// nlohmann's what() reads "[json.exception.parse_error.101] parse error at line 3, column 5:
// syntax error ..."; keep only the part after the position, which we print ourselves.
std::string parse_error_detail(const std::string& what) {
  std::size_t start = what.find("parse error");
  std::size_t colon = what.find(": ", start == std::string::npos ? 0 : start);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

// 1-based line and column of the last character nlohmann read (`byte` counts characters read).
std::pair<int, int> line_and_column(const std::string& text, std::size_t byte) {
  std::size_t index = std::min(byte > 0 ? byte - 1 : 0, text.size());
  int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + index, '\n'));
  std::size_t newline = index == 0 ? std::string::npos : text.rfind('\n', index - 1);
  std::size_t line_start = newline == std::string::npos ? 0 : newline + 1;
  return {line, static_cast<int>(index - line_start + 1)};
}

// Optimal string alignment distance: Levenshtein plus adjacent transpositions, so the
// common typo "trasnformer" is one edit from "transformer".
int edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<int>> d(a.size() + 1, std::vector<int>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = static_cast<int>(i);
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

bool is_valid_utf8(const std::string& text) {
  try {
    json(text).dump();
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

std::string format_number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

// ---- Duration ---------------------------------------------------------------------------

Duration parse_duration(const std::string& text) {
  const std::string error = "invalid duration \"" + text + "\"; expected e.g. \"90s\", \"45m\", \"2h\", \"1h30m\"";
  ATTN_CHECK(!text.empty(), error);
  const bool has_units = text.find_first_of("dhms") != std::string::npos;
  double total = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    // One part: an unsigned decimal amount, then a unit letter (optional only in a bare "90").
    std::size_t end = text.find_first_not_of("0123456789.", pos);
    std::string amount = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    ATTN_CHECK(!amount.empty() && amount != "." && std::count(amount.begin(), amount.end(), '.') <= 1, error);
    double unit = 0;
    char letter = end == std::string::npos ? '\0' : text[end];
    switch (letter) {
      case 'd':
        unit = 86400;
        break;
      case 'h':
        unit = 3600;
        break;
      case 'm':
        unit = 60;
        break;
      case 's':
        unit = 1;
        break;
      case '\0':
        unit = has_units ? 0 : 1;
        break;
      default:
        break;
    }
    ATTN_CHECK(unit > 0, error);
    // strtod, not stod: 400 digits overflow to infinity (rejected below) instead of throwing
    // std::out_of_range.
    total += std::strtod(amount.c_str(), nullptr) * unit;
    ATTN_CHECK(std::isfinite(total), error);
    pos = end == std::string::npos ? text.size() : end + 1;
  }
  return Duration{total};
}

std::string format_duration(Duration duration) {
  double seconds = duration.seconds;
  if (seconds != std::floor(seconds) || seconds >= 1e15) return json(seconds).dump() + "s";
  auto remaining = static_cast<long long>(seconds);
  if (remaining == 0) return "0s";
  std::string out;
  const std::pair<long long, char> units[] = {{86400, 'd'}, {3600, 'h'}, {60, 'm'}, {1, 's'}};
  for (auto [size, letter] : units) {
    if (remaining >= size) out += std::to_string(remaining / size) + letter;
    remaining %= size;
  }
  return out;
}

// ---- Files and overrides ------------------------------------------------------------------

json parse_config_text(const std::string& text, const std::string& source) {
  try {
    return json::parse(text, json_depth_limit(source), /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    auto [line, column] = line_and_column(text, e.byte);
    throw Error(source + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " +
                parse_error_detail(e.what()));
  } catch (const json::out_of_range& e) {
    // A number beyond double's range ("1e400"): nlohmann names the literal but not its place.
    const std::string what = e.what(), marker = "parsing '";
    const size_t start = what.find(marker);
    const std::string literal =
        start == std::string::npos ? "" : what.substr(start + marker.size(), what.rfind('\'') - start - marker.size());
    const size_t at = literal.empty() ? std::string::npos : text.find(literal);
    std::string place = source;
    if (at != std::string::npos) {
      auto [line, column] = line_and_column(text, at + 1);
      place += ":" + std::to_string(line) + ":" + std::to_string(column);
    }
    throw Error(place + ": the number " + literal + " is too large to represent");
  }
}

json read_config_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ATTN_CHECK(in.good(), "cannot open config file ", path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_config_text(text.str(), path);
}

json override_value(const std::string& key, const std::string& text) {
  json value = json::parse(text, json_depth_limit("override " + key), /*allow_exceptions=*/false);
  if (!value.is_discarded()) return value;
  // JSON text is checked for UTF-8 by the parser; a plain string must be checked here, or
  // writing config.json would fail much later with nlohmann's "invalid UTF-8 byte".
  ATTN_CHECK(is_valid_utf8(text), "cannot set ", key, ": the value is not valid UTF-8");
  return text;
}

void apply_override(json& config, const std::string& assignment) {
  std::size_t equals = assignment.find('=');
  ATTN_CHECK(equals != std::string::npos && equals > 0, "malformed override \"", assignment,
             "\"; expected key=value, e.g. train.max_steps=1000");
  std::string key = assignment.substr(0, equals);
  json value = override_value(key, assignment.substr(equals + 1));

  json* node = &config;
  std::string walked;
  std::size_t start = 0;
  while (true) {
    ATTN_CHECK(node->is_object(), "cannot set ", key, ": ", walked.empty() ? "the config" : walked,
               " is not an object");
    std::size_t dot = key.find('.', start);
    std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    ATTN_CHECK(!part.empty(), "malformed override key \"", key, "\"");
    walked = join_key(walked, part);
    if (dot == std::string::npos) {
      (*node)[part] = std::move(value);
      return;
    }
    node = &(*node)[part];  // creates an empty object (from null) when missing
    if (node->is_null()) *node = json::object();
    start = dot + 1;
  }
}

// ---- Keys and validation ----------------------------------------------------------------

std::string join_key(const std::string& path, const std::string& name) {
  return path.empty() ? name : path + "." + name;
}

std::string closest_match(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  int best_distance = std::numeric_limits<int>::max();
  for (const auto& candidate : candidates) {
    int distance = edit_distance(name, candidate);
    if (distance < best_distance) best = candidate, best_distance = distance;
  }
  // Beyond a third of the name's length the "suggestion" is noise, not a typo fix.
  int limit = std::max(2, static_cast<int>(name.size()) / 3);
  return best_distance <= limit ? best : "";
}

void require_at_least(const std::string& key, double value, double min) {
  ATTN_CHECK(value >= min, key, " must be >= ", format_number(min), "; got ", format_number(value));
}

Allowed Allowed::interval(double min, bool min_open, double max, bool max_open) {
  Allowed allowed;
  allowed.interval_ = Interval{min, max, min_open, max_open};
  return allowed;
}

std::string Allowed::text() const {
  if (!names_.empty()) {
    std::string list;
    for (const std::string& name : names_) list += (list.empty() ? "\"" : ", \"") + name + "\"";
    return list;
  }
  if (!interval_) return "";
  const Interval& i = *interval_;
  if (std::isinf(i.max)) return (i.min_open ? "> " : ">= ") + format_number(i.min);
  return (i.min_open ? "(" : "[") + format_number(i.min) + ", " + format_number(i.max) + (i.max_open ? ")" : "]");
}

// "must be >= 1", "must be > 0", "must be in [0, 1)", "must be one of ...", or in the
// declaration's own words.
static std::string must_be(const std::string& expected, const std::string& text, bool names, bool bounded) {
  if (!expected.empty()) return "must be " + expected;
  if (names) return "must be one of " + text;
  return bounded ? "must be in " + text : "must be " + text;
}

std::string Allowed::violation(double value) const {
  if (!interval_) return "";
  const Interval& i = *interval_;
  const bool above_min = i.min_open ? value > i.min : value >= i.min;
  const bool below_max = i.max_open ? value < i.max : value <= i.max;
  if (above_min && below_max) return "";
  return must_be(expected_, text(), false, !std::isinf(i.max)) + "; got " + format_number(value);
}

std::string Allowed::violation(const std::string& choice_name) const {
  if (names_.empty() || std::find(names_.begin(), names_.end(), choice_name) != names_.end()) return "";
  return must_be(expected_, text(), true, false) + "; got " + json(choice_name).dump();
}

// ---- Leaf readers and writers -------------------------------------------------------------

std::string element_key(const std::string& key, size_t index) { return key + "[" + std::to_string(index) + "]"; }

namespace detail {

bool read_bool(const json& j, const std::string& key) {
  if (!j.is_boolean()) type_error(j, key, "true or false");
  return j.get<bool>();
}

std::int64_t read_integer(const json& j, const std::string& key, std::int64_t min, std::int64_t max) {
  auto out_of_range = [&] {
    throw Error(describe(key) + ": " + j.dump() + " is out of range [" + std::to_string(min) + ", " +
                std::to_string(max) + "]");
  };
  if (j.is_number_unsigned()) {
    auto value = j.get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(max)) out_of_range();
    return static_cast<std::int64_t>(value);
  }
  if (j.is_number_integer()) {
    auto value = j.get<std::int64_t>();
    if (value < min || value > max) out_of_range();
    return value;
  }
  // 1e3 or 4096.0 are integers written as reals; 1.5 is not.
  if (!j.is_number_float()) type_error(j, key, "an integer");
  double value = j.get<double>();
  if (!std::isfinite(value) || value != std::floor(value)) type_error(j, key, "an integer");
  // double(max) + 1 is exact for int32 and rounds to 2^63 for int64: both the first value out.
  if (value < static_cast<double>(min) || value >= static_cast<double>(max) + 1.0) out_of_range();
  return static_cast<std::int64_t>(value);
}

double read_real(const json& j, const std::string& key) {
  if (!j.is_number()) type_error(j, key, "a number");
  return j.get<double>();
}

std::string read_string(const json& j, const std::string& key) {
  if (!j.is_string()) type_error(j, key, "a string");
  return j.get<std::string>();
}

void check_array(const json& j, const std::string& key) {
  if (!j.is_array()) type_error(j, key, "a list");
}

std::vector<std::string> read_string_list(const json& j, const std::string& key) {
  if (!j.is_array()) type_error(j, key, "a list of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < j.size(); ++i) out.push_back(read_string(j[i], element_key(key, i)));
  return out;
}

Duration read_duration(const json& j, const std::string& key) {
  const std::string expected = "a duration (seconds, or a string like \"90s\", \"45m\", \"1h30m\")";
  if (j.is_number()) {
    double seconds = j.get<double>();
    if (seconds < 0) throw Error(describe(key) + ": a duration cannot be negative, got " + j.dump());
    return Duration{seconds};
  }
  if (!j.is_string()) type_error(j, key, expected);
  try {
    return parse_duration(j.get<std::string>());
  } catch (const Error&) {
    type_error(j, key, expected);
  }
}

AttentionHead read_attention_head(const json& j, const std::string& key) {
  if (j.is_string() && j.get<std::string>() == "mean") return {};
  const bool index = j.is_number_unsigned() || (j.is_number_integer() && j.get<int64_t>() >= 0);
  if (!index || j.get<uint64_t>() > uint64_t(std::numeric_limits<int>::max()))
    type_error(j, key, "a head index from 0 or \"mean\"");
  return {int(j.get<uint64_t>())};
}

json write_attention_head(const AttentionHead& head) { return head.index ? json(*head.index) : json("mean"); }

json write_float(float value) {
  // json(double(0.1f)) prints 0.10000000149011612; find the shortest text that reads back as
  // the same float and store that decimal as a double.
  char buffer[32];
  for (int precision = 6; precision <= 9; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, static_cast<double>(value));
    if (std::strtof(buffer, nullptr) == value) break;
  }
  return json(std::strtod(buffer, nullptr));
}

json write_duration(Duration duration) {
  // Whole seconds as readable text ("1h30m"); zero ("no limit") and fractions as a number.
  double seconds = duration.seconds;
  if (seconds == 0) return json(0);
  // format_duration writes 1e20 s as "1e+20s", which parse_duration (units, no exponents)
  // would refuse: such a value stays a number, so config.json always reads back.
  if (seconds != std::floor(seconds) || seconds >= 1e15) return json(seconds);
  return json(format_duration(duration));
}

void check_object_keys(const json& j, const std::string& path, const std::vector<std::string>& known) {
  if (!j.is_object()) type_error(j, path, "an object");
  for (const auto& item : j.items()) {
    if (std::find(known.begin(), known.end(), item.key()) != known.end()) continue;
    std::string message = "unknown config key " + join_key(path, item.key());
    std::string suggestion = closest_match(item.key(), known);
    if (!suggestion.empty()) {
      message += "; did you mean " + join_key(path, suggestion) + "?";
    } else {
      message += "; known keys" + (path.empty() ? std::string() : " of " + path) + ":";
      for (const auto& name : known) message += " " + name;
    }
    throw Error(message);
  }
}

}  // namespace detail

}  // namespace attn::io
