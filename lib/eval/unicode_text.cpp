#include "eval/unicode_text.h"

namespace attn::eval {

namespace {

// One decoded code point and the number of bytes it took.
struct Decoded {
  char32_t code_point;
  size_t length;
};

constexpr char32_t kEscapeBase = 0xDC00;  // surrogateescape: byte b -> U+DC00 + b

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Decodes the code point starting at text[pos]; rejects overlong forms, surrogates and
// values above U+10FFFF like Python's strict decoder, escaping the first byte instead.
Decoded decode_at(std::string_view text, size_t pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  if (lead < 0x80) return {lead, 1};
  size_t length = 0;
  char32_t value = 0, minimum = 0;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, value = lead & 0x1F, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, value = lead & 0x0F, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, value = lead & 0x07, minimum = 0x10000;
  }
  const Decoded invalid{kEscapeBase + lead, 1};
  if (length == 0 || pos + length > text.size()) return invalid;
  for (size_t i = 1; i < length; ++i) {
    const auto byte = static_cast<unsigned char>(text[pos + i]);
    if (!is_continuation(byte)) return invalid;
    value = (value << 6) | (byte & 0x3F);
  }
  if (value < minimum || value > 0x10FFFF || (value >= 0xD800 && value <= 0xDFFF)) return invalid;
  return {value, length};
}

}  // namespace

bool is_python_space(char32_t c) {
  if ((c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20)) return true;
  if (c < 0x85) return false;
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

std::u32string decode_utf8(std::string_view text) {
  std::u32string out;
  out.reserve(text.size());
  for (size_t pos = 0; pos < text.size();) {
    const Decoded d = decode_at(text, pos);
    out.push_back(d.code_point);
    pos += d.length;
  }
  return out;
}

std::vector<std::string> split_whitespace(std::string_view text) {
  std::vector<std::string> words;
  size_t word_begin = std::string_view::npos;
  for (size_t pos = 0; pos < text.size();) {
    const Decoded d = decode_at(text, pos);
    if (is_python_space(d.code_point)) {
      if (word_begin != std::string_view::npos) words.emplace_back(text.substr(word_begin, pos - word_begin));
      word_begin = std::string_view::npos;
    } else if (word_begin == std::string_view::npos) {
      word_begin = pos;
    }
    pos += d.length;
  }
  if (word_begin != std::string_view::npos) words.emplace_back(text.substr(word_begin));
  return words;
}

std::string_view rstrip_whitespace(std::string_view text) {
  size_t end = 0;  // one past the last non-whitespace code point
  for (size_t pos = 0; pos < text.size();) {
    const Decoded d = decode_at(text, pos);
    pos += d.length;
    if (!is_python_space(d.code_point)) end = pos;
  }
  return text.substr(0, end);
}

std::u32string code_points_without_whitespace(std::string_view text) {
  std::u32string out = decode_utf8(text);
  std::u32string kept;
  kept.reserve(out.size());
  for (char32_t c : out)
    if (!is_python_space(c)) kept.push_back(c);
  return kept;
}

}  // namespace attn::eval
