#include "serve/text_template.h"

#include <cstdint>

#include "core/check.h"

namespace attn::serve {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

// Appends `text` to the template: its leading and trailing whitespace as fixed pieces, the rest
// (if any) as a sentence.
void add_run(TextTemplate& text, std::string_view run, std::string sentence_of_core(std::string_view)) {
  size_t begin = 0, end = run.size();
  while (begin < end && is_space(run[begin])) ++begin;
  while (end > begin && is_space(run[end - 1])) --end;
  if (begin == end) {
    text.pieces.back() += run;
    return;
  }
  std::string sentence = sentence_of_core(run.substr(begin, end - begin));
  if (sentence.empty()) {  // only references to whitespace
    text.pieces.back() += run;
    return;
  }
  text.pieces.back() += run.substr(0, begin);
  text.sentences.push_back(std::move(sentence));
  text.pieces.emplace_back(run.substr(end));
}

std::string as_is(std::string_view core) { return std::string(core); }

void append_utf8(std::string& out, uint32_t code_point) {
  if (code_point < 0x80) {
    out += char(code_point);
  } else if (code_point < 0x800) {
    out += char(0xC0 | (code_point >> 6));
    out += char(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += char(0xE0 | (code_point >> 12));
    out += char(0x80 | ((code_point >> 6) & 0x3F));
    out += char(0x80 | (code_point & 0x3F));
  } else {
    out += char(0xF0 | (code_point >> 18));
    out += char(0x80 | ((code_point >> 12) & 0x3F));
    out += char(0x80 | ((code_point >> 6) & 0x3F));
    out += char(0x80 | (code_point & 0x3F));
  }
}

// The character a reference at text[0] ('&') stands for, and how many bytes it spans; 0 bytes
// when it is none (the '&' is then a character of its own).
size_t decode_reference(std::string_view text, std::string& out) {
  const size_t semicolon = text.find(';');
  if (semicolon == std::string_view::npos || semicolon > 10) return 0;
  const std::string_view name = text.substr(1, semicolon - 1);
  static const std::pair<std::string_view, uint32_t> named[] = {{"amp", '&'},  {"lt", '<'},    {"gt", '>'},
                                                                {"quot", '"'}, {"apos", '\''}, {"nbsp", 0xA0}};
  for (const auto& [entity, code_point] : named)
    if (name == entity) {
      append_utf8(out, code_point);
      return semicolon + 1;
    }
  if (name.size() < 2 || name[0] != '#') return 0;
  const bool hex = name[1] == 'x' || name[1] == 'X';
  const std::string_view digits = name.substr(hex ? 2 : 1);
  if (digits.empty()) return 0;
  uint32_t code_point = 0;
  for (char c : digits) {
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (hex && c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (hex && c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (digit < 0) return 0;
    code_point = code_point * (hex ? 16 : 10) + uint32_t(digit);
    if (code_point > 0x10FFFF) return 0;
  }
  if (code_point == 0 || (code_point >= 0xD800 && code_point <= 0xDFFF)) return 0;  // not characters
  append_utf8(out, code_point);
  return semicolon + 1;
}

// The text of an HTML run as the model reads it: references decoded, then whitespace runs as
// one space and none at the ends (a decoded &#32; included), so that rendering it and reading
// the result again gives the same sentence.
std::string html_sentence(std::string_view core) {
  std::string decoded;
  for (size_t i = 0; i < core.size();) {
    if (core[i] == '&') {
      const size_t used = decode_reference(core.substr(i), decoded);
      if (used > 0) {
        i += used;
        continue;
      }
    }
    decoded += core[i++];
  }
  std::string out;
  for (char c : decoded) {
    if (!is_space(c))
      out += c;
    else if (!out.empty() && out.back() != ' ')
      out += ' ';
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

bool starts_with_nocase(std::string_view text, size_t at, std::string_view prefix) {
  if (text.size() - at < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    char c = text[at + i];
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    if (c != prefix[i]) return false;
  }
  return true;
}

size_t find_nocase(std::string_view text, size_t from, std::string_view needle) {
  for (size_t at = from; at + needle.size() <= text.size(); ++at)
    if (starts_with_nocase(text, at, needle)) return at;
  return std::string_view::npos;
}

// The end (one past '>') of the tag that starts at html[at] ('<'), quotes in attributes
// respected; html.size() for a tag that never closes.
size_t tag_end(std::string_view html, size_t at) {
  char quote = 0;
  for (size_t i = at + 1; i < html.size(); ++i) {
    const char c = html[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '>') {
      return i + 1;
    }
  }
  return html.size();
}

// Where the markup that starts at html[at] ('<') ends, or `at` when this '<' starts no markup.
size_t markup_end(std::string_view html, size_t at) {
  if (html.compare(at, 4, "<!--") == 0) {
    const size_t close = html.find("-->", at + 4);
    return close == std::string_view::npos ? html.size() : close + 3;
  }
  if (at + 1 >= html.size()) return at;
  const char next = html[at + 1];
  const bool letter = (next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z');
  if (!letter && next != '/' && next != '!' && next != '?') return at;
  size_t end = tag_end(html, at);
  // Script and style content is code, not text: kept up to its closing tag.
  for (std::string_view raw : {std::string_view("script"), std::string_view("style")}) {
    if (!starts_with_nocase(html, at + 1, raw)) continue;
    const size_t after = at + 1 + raw.size();
    if (after < html.size() && (is_space(html[after]) || html[after] == '>' || html[after] == '/')) {
      const size_t close = find_nocase(html, end, std::string("</") + std::string(raw));
      end = close == std::string_view::npos ? html.size() : tag_end(html, close);
    }
  }
  return end;
}

}  // namespace

TextTemplate plain_text_template(std::string_view text) {
  TextTemplate result;
  result.pieces.emplace_back();
  size_t begin = 0;
  while (true) {
    const size_t newline = text.find('\n', begin);
    const std::string_view line = text.substr(begin, newline == std::string_view::npos ? text.npos : newline - begin);
    add_run(result, line, as_is);
    if (newline == std::string_view::npos) break;
    result.pieces.back() += '\n';
    begin = newline + 1;
  }
  return result;
}

TextTemplate html_template(std::string_view html) {
  TextTemplate result;
  result.html = true;
  result.pieces.emplace_back();
  size_t run_begin = 0, i = 0;
  while (i < html.size()) {
    const size_t end = html[i] == '<' ? markup_end(html, i) : i;
    if (end == i) {
      ++i;
      continue;
    }
    add_run(result, html.substr(run_begin, i - run_begin), html_sentence);
    result.pieces.back() += html.substr(i, end - i);
    i = run_begin = end;
  }
  add_run(result, html.substr(run_begin), html_sentence);
  return result;
}

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else
      out += c;
  }
  return out;
}

std::string render(const TextTemplate& text, const std::vector<std::string>& translations) {
  ATTN_CHECK(translations.size() == text.sentences.size(), "render: ", translations.size(), " translations for ",
             text.sentences.size(), " sentences");
  std::string out = text.pieces.front();
  for (size_t i = 0; i < translations.size(); ++i) {
    out += text.html ? escape_html(translations[i]) : translations[i];
    out += text.pieces[i + 1];
  }
  return out;
}

}  // namespace attn::serve
