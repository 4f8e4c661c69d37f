#include "serve/translate_request.h"

#include <cstdlib>

#include "io/json_depth.h"

namespace attn::serve {

using nlohmann::json;

namespace {

[[noreturn]] void bad_request(const std::string& message) { throw HttpError(400, message); }

// Bounds a layer or head index may have before the model is asked (no model has this many).
constexpr int64_t kMaxAlignmentIndex = 1024;
// alignment_head's value for the mean of the heads, as attn-translate's --alignment-head.
const std::string kMeanHead = "mean";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string url_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%' && i + 2 < text.size() && hex_value(text[i + 1]) >= 0 && hex_value(text[i + 2]) >= 0) {
      out += char(hex_value(text[i + 1]) * 16 + hex_value(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// q: a string, or a non-empty array of strings.
void read_q(const json& fields, std::vector<std::string>& q, bool& batch) {
  const auto found = fields.find("q");
  if (found == fields.end() || found->is_null() || (found->is_string() && found->get_ref<const std::string&>().empty()))
    bad_request("Invalid request: missing q parameter");
  if (found->is_string()) {
    q = {found->get<std::string>()};
    return;
  }
  if (!found->is_array()) bad_request("Invalid request: q must be a string or an array of strings");
  if (found->empty()) bad_request("Invalid request: missing q parameter");
  batch = true;
  for (const json& text : *found) {
    if (!text.is_string()) bad_request("Invalid request: q must be a string or an array of strings");
    q.push_back(text.get<std::string>());
  }
}

std::string string_field(const json& fields, const char* name, bool required) {
  const auto found = fields.find(name);
  if (found == fields.end() || found->is_null() ||
      (found->is_string() && found->get_ref<const std::string&>().empty())) {
    if (required) bad_request(std::string("Invalid request: missing ") + name + " parameter");
    return "";
  }
  if (!found->is_string()) bad_request(std::string("Invalid request: ") + name + " must be a string");
  return found->get<std::string>();
}

// A whole number >= 0 (JSON) or its digits (a form's string); `fallback` when absent.
int count_field(const json& fields, const char* name, int fallback, int max) {
  const auto found = fields.find(name);
  if (found == fields.end() || found->is_null()) return fallback;
  const std::string error =
      std::string("Invalid request: ") + name + " must be a whole number from 0 to " + std::to_string(max);
  int64_t value = -1;
  if (found->is_number_integer() || found->is_number_unsigned()) {
    if (found->is_number_unsigned() && found->get<uint64_t>() > uint64_t(max)) bad_request(error);
    value = found->get<int64_t>();
  } else if (found->is_string()) {
    const std::string& digits = found->get_ref<const std::string&>();
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
      bad_request(error);
    value = std::stoll(digits);
  } else {
    bad_request(error);
  }
  if (value < 0 || value > max) bad_request(error);
  return int(value);
}

int64_t code_points(const std::string& text) {
  int64_t count = 0;
  for (unsigned char c : text) count += (c & 0xC0) != 0x80;
  return count;
}

const json* present(const json& fields, const char* name) {
  const auto found = fields.find(name);
  return found == fields.end() || found->is_null() ? nullptr : &*found;
}

// A whole number from `low` to `high`: JSON's, or its digits from a form (a '-' first allowed).
std::optional<int64_t> whole_number(const json& value, int64_t low, int64_t high) {
  int64_t number = 0;
  if (value.is_number_unsigned()) {  // before is_number_integer, which holds for it too
    if (value.get<uint64_t>() > uint64_t(high)) return std::nullopt;
    number = int64_t(value.get<uint64_t>());
  } else if (value.is_number_integer()) {
    number = value.get<int64_t>();
  } else if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    const size_t digits = text.rfind('-', 0) == 0 ? 1 : 0;
    if (text.size() == digits || text.size() > digits + 9 ||
        text.find_first_not_of("0123456789", digits) != std::string::npos)
      return std::nullopt;
    number = std::stoll(text);
  } else {
    return std::nullopt;
  }
  if (number < low || number > high) return std::nullopt;
  return number;
}

// A number from 0 to 1: JSON's, or its text from a form.
std::optional<float> fraction(const json& value) {
  double number = -1;
  if (value.is_number()) {
    number = value.get<double>();
  } else if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    char* end = nullptr;
    number = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (!(number >= 0 && number <= 1)) return std::nullopt;  // NaN too
  return float(number);
}

// "alignments" and attn-translate's --alignment-* flags as fields, over `defaults`; unset without
// alignments.
std::optional<decode::AlignmentExtraction> alignment_fields(const json& fields,
                                                            const decode::AlignmentExtraction& defaults) {
  static const char* const options[] = {"alignment_layer", "alignment_head", "alignment_shift", "alignment_threshold",
                                        "alignment_words"};
  decode::AlignmentExtraction extraction = defaults;
  extraction.unit = decode::AlignmentUnit::words;
  bool wanted = false;
  if (const json* alignments = present(fields, "alignments")) {
    if (alignments->is_boolean()) {
      wanted = alignments->get<bool>();
    } else if (alignments->is_string() && parse_choice<decode::AlignmentUnit>(alignments->get<std::string>())) {
      wanted = true;
      extraction.unit = *parse_choice<decode::AlignmentUnit>(alignments->get<std::string>());
    } else {
      bad_request("Invalid request: alignments must be true, false, " + choice_list<decode::AlignmentUnit>());
    }
  }
  if (!wanted) {
    for (const char* option : options)
      if (present(fields, option)) bad_request(std::string("Invalid request: ") + option + " needs alignments");
    return std::nullopt;
  }
  if (const json* layer = present(fields, "alignment_layer")) {
    const std::optional<int64_t> value = whole_number(*layer, -kMaxAlignmentIndex, kMaxAlignmentIndex);
    if (!value)
      bad_request("Invalid request: alignment_layer must be a whole number (from 0; negative counts from the last)");
    extraction.layer = int(*value);
  }
  if (const json* head = present(fields, "alignment_head")) {
    if (head->is_string() && head->get_ref<const std::string&>() == kMeanHead) {
      extraction.head.reset();
    } else {
      const std::optional<int64_t> value = whole_number(*head, 0, kMaxAlignmentIndex);
      if (!value) bad_request("Invalid request: alignment_head must be a head index from 0 or \"mean\"");
      extraction.head = int(*value);
    }
  }
  if (const json* shift = present(fields, "alignment_shift")) {
    const std::optional<int64_t> value = whole_number(*shift, 0, 1);
    if (!value) bad_request("Invalid request: alignment_shift must be 0 or 1");
    extraction.shifted = *value == 1;
  }
  if (const json* threshold = present(fields, "alignment_threshold")) {
    const std::optional<float> value = fraction(*threshold);
    if (!value) bad_request("Invalid request: alignment_threshold must be a number from 0 to 1");
    extraction.threshold = *value;
  }
  if (const json* words = present(fields, "alignment_words")) {
    const std::optional<decode::WordLinking> value =
        words->is_string() ? parse_choice<decode::WordLinking>(words->get<std::string>()) : std::nullopt;
    if (!value) bad_request("Invalid request: alignment_words must be " + choice_list<decode::WordLinking>());
    extraction.word_linking = *value;
  }
  return extraction;
}

// prefix: absent, a string (every text's) or an array of strings, one per text of q.
std::vector<std::string> prefix_field(const json& fields, size_t texts) {
  const json* prefix = present(fields, "prefix");
  if (!prefix) return {};
  const std::string error = "Invalid request: prefix must be a string or an array of strings, one per text of q";
  if (prefix->is_string()) return std::vector<std::string>(texts, prefix->get<std::string>());
  if (!prefix->is_array()) bad_request(error);
  if (prefix->size() != texts)
    bad_request("Invalid request: prefix has " + std::to_string(prefix->size()) + " entries for " +
                std::to_string(texts) + " texts of q");
  std::vector<std::string> prefixes;
  for (const json& text : *prefix) {
    if (!text.is_string()) bad_request(error);
    prefixes.push_back(text.get<std::string>());
  }
  return prefixes;
}

// Few users want more than a handful; the beam bounds what a request gets anyway.
constexpr int kMaxAlternatives = 64;

}  // namespace

bool media_type_is(std::string_view content_type, std::string_view type) {
  const std::string_view base = content_type.substr(0, content_type.find(';'));
  size_t begin = 0, end = base.size();
  while (begin < end && base[begin] == ' ') ++begin;
  while (end > begin && base[end - 1] == ' ') --end;
  if (end - begin != type.size()) return false;
  for (size_t i = 0; i < type.size(); ++i) {
    char c = base[begin + i];
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    if (c != type[i]) return false;
  }
  return true;
}

bool is_valid_utf8(std::string_view text) {
  try {
    (void)json(std::string(text)).dump();
    return true;
  } catch (const json::type_error&) {
    return false;
  }
}

json form_fields(std::string_view body) {
  json fields = json::object();
  size_t begin = 0;
  while (begin <= body.size()) {
    size_t end = body.find('&', begin);
    if (end == std::string_view::npos) end = body.size();
    const std::string_view pair = body.substr(begin, end - begin);
    if (!pair.empty()) {
      const size_t equals = pair.find('=');
      const std::string name = url_decode(pair.substr(0, equals));
      const std::string value = equals == std::string_view::npos ? "" : url_decode(pair.substr(equals + 1));
      if (!is_valid_utf8(name) || !is_valid_utf8(value)) bad_request("Invalid request: the form is not valid UTF-8");
      fields[name] = value;
    }
    begin = end + 1;
  }
  return fields;
}

json body_fields(std::string_view body, std::string_view content_type) {
  if (media_type_is(content_type, "application/x-www-form-urlencoded")) return form_fields(body);
  // JSON: as application/json, and as the default (a client that names no type; curl -d names
  // the form type, so JSON with curl needs -H 'Content-Type: application/json').
  if (!content_type.empty() && !media_type_is(content_type, "application/json") &&
      !media_type_is(content_type, "text/plain"))
    throw HttpError(400, "Invalid request: send application/json or application/x-www-form-urlencoded, not " +
                             std::string(content_type));
  json fields;
  try {
    fields = json::parse(body.begin(), body.end(), io::json_depth_limit("the request"));
  } catch (const json::parse_error& error) {
    bad_request(std::string("Invalid request: the body is not valid JSON: ") + error.what());
  } catch (const std::exception& error) {
    bad_request(std::string("Invalid request: ") + error.what());
  }
  if (!fields.is_object()) bad_request("Invalid request: the body must be a JSON object");
  return fields;
}

TranslateRequest parse_translate_request(const json& fields) {
  TranslateRequest request;
  read_q(fields, request.q, request.batch);
  request.source = string_field(fields, "source", true);
  request.target = string_field(fields, "target", true);
  const std::string format = string_field(fields, "format", false);
  if (format == "html")
    request.format = TextFormat::html;
  else if (!format.empty() && format != "text")
    bad_request(format + " format is not supported");
  request.alternatives = count_field(fields, "alternatives", 0, kMaxAlternatives);
  request.api_key = string_field(fields, "api_key", false);
  return request;
}

NativeRequest parse_native_request(const json& fields, const decode::AlignmentExtraction& alignment_defaults) {
  NativeRequest request;
  read_q(fields, request.q, request.batch);
  request.nbest = count_field(fields, "nbest", 1, kMaxAlternatives + 1);
  if (request.nbest < 1) bad_request("Invalid request: nbest must be a whole number from 1 to 65");
  request.alignments = alignment_fields(fields, alignment_defaults);
  request.prefix = prefix_field(fields, request.q.size());
  request.api_key = string_field(fields, "api_key", false);
  return request;
}

std::vector<std::optional<std::string>> sentence_prefixes(const NativeRequest& request,
                                                          const std::vector<TextTemplate>& templates) {
  std::vector<std::optional<std::string>> prefixes;
  for (size_t t = 0; t < templates.size(); ++t)
    for (size_t j = 0; j < templates[t].sentences.size(); ++j)
      prefixes.push_back(j == 0 && t < request.prefix.size() ? std::optional<std::string>(request.prefix[t])
                                                             : std::nullopt);
  return prefixes;
}

DetectRequest parse_detect_request(const json& fields) {
  DetectRequest request;
  bool batch = false;
  read_q(fields, request.q, batch);
  request.api_key = string_field(fields, "api_key", false);
  return request;
}

void check_text_size(const std::vector<std::string>& q, const RequestLimits& limits) {
  if (limits.char_limit <= 0) return;
  int64_t characters = 0;
  for (const std::string& text : q) characters += code_points(text);
  if (characters > limits.char_limit)
    bad_request("Invalid request: request (" + std::to_string(characters) + ") exceeds text limit (" +
                std::to_string(limits.char_limit) + ")");
}

void check_sentence_count(int64_t sentences, const RequestLimits& limits) {
  if (limits.max_sentences > 0 && sentences > limits.max_sentences)
    bad_request("Invalid request: request (" + std::to_string(sentences) + " sentences) exceeds the sentence limit (" +
                std::to_string(limits.max_sentences) + ")");
}

}  // namespace attn::serve
