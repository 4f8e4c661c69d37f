#include "serve/multipart_form.h"

#include <optional>

#include "serve/translate_request.h"

namespace attn::serve {

namespace {

constexpr std::string_view kCrlf = "\r\n";
// RFC 2046: a boundary has 1 to 70 characters.
constexpr size_t kMaxBoundary = 70;

HttpError form_error(const std::string& what) { return HttpError(400, "Invalid request: the multipart form " + what); }

char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// A quoted string's text (backslash escapes one character) from text[at] == '"'; `at` ends
// after the closing quote (or at the end of an unclosed one).
std::string quoted_text(std::string_view text, size_t& at) {
  std::string out;
  for (++at; at < text.size() && text[at] != '"'; ++at) {
    if (text[at] == '\\' && at + 1 < text.size()) ++at;
    out += text[at];
  }
  if (at < text.size()) ++at;
  return out;
}

// The value of parameter `name` (any case) of a header value "type; a=b; c=\"d\"", or none.
std::optional<std::string> header_parameter(std::string_view value, std::string_view name) {
  size_t at = value.find(';');
  while (at != std::string_view::npos && at < value.size()) {
    ++at;  // past ';'
    const size_t equals = value.find_first_of("=;", at);
    if (equals == std::string_view::npos || value[equals] == ';') {
      at = equals;
      continue;
    }
    const std::string_view key = trimmed(value.substr(at, equals - at));
    at = equals + 1;
    while (at < value.size() && value[at] == ' ') ++at;
    std::string parameter;
    if (at < value.size() && value[at] == '"') {
      parameter = quoted_text(value, at);
      at = value.find(';', at);
    } else {
      const size_t end = value.find(';', at);
      parameter = std::string(trimmed(value.substr(at, end == std::string_view::npos ? end : end - at)));
      at = end;
    }
    if (equal_ignoring_case(key, name)) return parameter;
  }
  return std::nullopt;
}

// The name of the part whose header lines are `headers` (the part's `index`, from 1, for the error).
std::string part_name(std::string_view headers, size_t index) {
  const std::string_view disposition = "content-disposition:";
  for (size_t at = 0; at <= headers.size();) {
    const size_t end = std::min(headers.find(kCrlf, at), headers.size());
    const std::string_view line = headers.substr(at, end - at);
    if (equal_ignoring_case(line.substr(0, disposition.size()), disposition))
      if (std::optional<std::string> name = header_parameter(line.substr(disposition.size()), "name")) return *name;
    at = end + kCrlf.size();
  }
  throw form_error("has a part without a name (part " + std::to_string(index) +
                   " needs Content-Disposition: form-data; name=\"...\")");
}

}  // namespace

bool is_multipart_form(std::string_view content_type) { return media_type_is(content_type, "multipart/form-data"); }

std::string multipart_boundary(std::string_view content_type) {
  const std::optional<std::string> boundary = header_parameter(content_type, "boundary");
  if (!boundary || boundary->empty())
    throw form_error("has no boundary: its Content-Type needs one (multipart/form-data; boundary=...)");
  if (boundary->size() > kMaxBoundary)
    throw form_error("boundary is longer than " + std::to_string(kMaxBoundary) + " characters");
  return *boundary;
}

FormParts parse_multipart_form(std::string_view body, std::string_view boundary) {
  const std::string delimiter = "--" + std::string(boundary), next = std::string(kCrlf) + delimiter;
  // The first delimiter opens the body or a line after the preamble.
  size_t at = body.compare(0, delimiter.size(), delimiter) == 0 ? 0 : body.find(next);
  if (at == std::string_view::npos) throw form_error("has no boundary line --" + std::string(boundary));
  if (at > 0) at += kCrlf.size();
  FormParts parts;
  for (;;) {
    at += delimiter.size();
    if (body.compare(at, 2, "--") == 0) return parts;  // the final delimiter; the rest is epilogue
    while (at < body.size() && (body[at] == ' ' || body[at] == '\t')) ++at;  // transport padding
    if (body.compare(at, kCrlf.size(), kCrlf) != 0)
      throw form_error(at >= body.size() ? "ends before its final boundary --" + std::string(boundary) + "--"
                                         : "has text after a boundary on its line");
    at += kCrlf.size();
    // Header lines (maybe none), a blank line, then the content up to the next delimiter.
    const size_t blank = body.compare(at, kCrlf.size(), kCrlf) == 0 ? at : body.find("\r\n\r\n", at);
    if (blank == std::string_view::npos)
      throw form_error("has a part without a blank line after its headers (part " + std::to_string(parts.size() + 1) +
                       ")");
    std::string name = part_name(body.substr(at, blank - at), parts.size() + 1);
    const size_t content = blank == at ? at + kCrlf.size() : blank + 2 * kCrlf.size();
    const size_t end = body.find(next, content);
    if (end == std::string_view::npos)
      throw form_error("ends before its final boundary --" + std::string(boundary) + "--");
    parts.emplace_back(std::move(name), std::string(body.substr(content, end - content)));
    at = end + kCrlf.size();
  }
}

}  // namespace attn::serve
