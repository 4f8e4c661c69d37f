#pragma once
// Unicode text helpers that reproduce Python 3 `str` semantics on UTF-8 bytes.
//
// sacreBLEU works on Python strings: `str.split()` and `str.rstrip()` treat every Unicode
// whitespace code point as a separator (not just ASCII), and chrF counts n-grams of code
// points, not bytes. These helpers give the C++ metrics the same view of the text.
#include <string>
#include <string_view>
#include <vector>

namespace attn::eval {

// True for the code points Python's str.isspace() accepts (ASCII \t \n \v \f \r, 0x1C-0x1F,
// space, U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000).
bool is_python_space(char32_t code_point);

// Decodes UTF-8 into code points. Invalid bytes do not throw: each becomes U+DC80..U+DCFF
// (Python's "surrogateescape" mapping), so distinct bad bytes stay distinct characters.
std::u32string decode_utf8(std::string_view text);

// Python `text.split()`: the maximal runs of non-whitespace, in order.
std::vector<std::string> split_whitespace(std::string_view text);

// Python `text.rstrip()`: drops trailing Unicode whitespace.
std::string_view rstrip_whitespace(std::string_view text);

// Python `"".join(text.split())` as code points: the text with every whitespace removed.
std::u32string code_points_without_whitespace(std::string_view text);

}  // namespace attn::eval
