#include "eval/tokenizer_13a.h"

#include "eval/unicode_text.h"

namespace attn::eval {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_period_or_comma(char c) { return c == '.' || c == ','; }

// Rule (a)'s character class: the ASCII ranges {-~, [-`, space-&, (-+, :-@, and '/'.
bool is_split_punctuation(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
         (c >= ':' && c <= '@') || c == '/';
}

// Python str.replace(from, to): every non-overlapping occurrence, scanning left to right.
std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  size_t pos = 0;
  for (size_t hit; (hit = text.find(from, pos)) != std::string_view::npos; pos = hit + from.size()) {
    out.append(text.substr(pos, hit - pos));
    out.append(to);
  }
  out.append(text.substr(pos));
  return out;
}

// re.sub for a pattern of two one-character classes `(A)(B)`: a match consumes both
// characters and scanning resumes after them. Working on UTF-8 bytes gives the same result
// as on code points because A and B only ever need to match ASCII bytes, or "not a digit",
// and a multi-byte character is never '.' ',' '-' or a digit in any of its bytes.
template <class First, class Second, class Emit>
std::string substitute_pairs(const std::string& text, First first, Second second, Emit emit) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  size_t i = 0;
  for (; i + 1 < text.size(); ++i) {
    if (first(text[i]) && second(text[i + 1])) {
      emit(out, text[i], text[i + 1]);
      ++i;
    } else {
      out.push_back(text[i]);
    }
  }
  if (i < text.size()) out.push_back(text[i]);
  return out;
}

std::string unescape(std::string_view line) {
  std::string s = replace_all(line, "<skipped>", "");
  s = replace_all(s, "-\n", "");
  s = replace_all(s, "\n", " ");
  s = replace_all(s, "&quot;", "\"");
  s = replace_all(s, "&amp;", "&");
  s = replace_all(s, "&lt;", "<");
  return replace_all(s, "&gt;", ">");
}

std::string join_with_spaces(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out.push_back(' ');
    out += w;
  }
  return out;
}

}  // namespace

std::string tokenize_13a(std::string_view line) {
  const std::string padded = " " + unescape(line) + " ";

  std::string s;
  s.reserve(padded.size() * 2);
  for (char c : padded) {
    if (is_split_punctuation(c)) {
      s.push_back(' '), s.push_back(c), s.push_back(' ');
    } else {
      s.push_back(c);
    }
  }
  auto not_digit = [](char c) { return !is_digit(c); };
  s = substitute_pairs(s, not_digit, is_period_or_comma, [](std::string& out, char a, char b) {
    out.push_back(a), out.push_back(' '), out.push_back(b), out.push_back(' ');
  });
  s = substitute_pairs(s, is_period_or_comma, not_digit, [](std::string& out, char a, char b) {
    out.push_back(' '), out.push_back(a), out.push_back(' '), out.push_back(b);
  });
  s = substitute_pairs(
      s, is_digit, [](char c) { return c == '-'; },
      [](std::string& out, char a, char b) {
        out.push_back(a), out.push_back(' '), out.push_back(b), out.push_back(' ');
      });
  return join_with_spaces(split_whitespace(s));
}

}  // namespace attn::eval
