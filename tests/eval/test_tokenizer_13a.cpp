#include <catch2/catch.hpp>

#include "eval/tokenizer_13a.h"
#include "eval/unicode_text.h"

using attn::eval::tokenize_13a;

TEST_CASE("13a splits punctuation off words but keeps apostrophes and inner dashes", "[eval][tokenizer_13a]") {
  CHECK(tokenize_13a("Hello, world.") == "Hello , world .");
  CHECK(tokenize_13a("he said: \"ok\"!") == "he said : \" ok \" !");
  CHECK(tokenize_13a("[a]{b}~|^_`") == "[ a ] { b } ~ | ^ _ `");
  CHECK(tokenize_13a("(hi)") == "( hi )");
  CHECK(tokenize_13a("l'uomo, 12,5%") == "l'uomo , 12,5 %");
  CHECK(tokenize_13a("x--y") == "x--y");
}

TEST_CASE("13a keeps periods and commas between digits and splits a dash after a digit", "[eval][tokenizer_13a]") {
  CHECK(tokenize_13a("It costs $3.50, or 1,000.5 euros.") == "It costs $ 3.50 , or 1,000.5 euros .");
  // A period is split unless a digit is on BOTH sides: ".5" and "5." split, "3,5.7" does not.
  CHECK(tokenize_13a(".5 and 5.") == ". 5 and 5 .");
  CHECK(tokenize_13a("1.a") == "1 . a");
  CHECK(tokenize_13a("a.1") == "a . 1");
  CHECK(tokenize_13a("e.g. U.S.A.") == "e . g . U . S . A .");
  CHECK(tokenize_13a("word...") == "word . . .");
  CHECK(tokenize_13a("3,5.7-2") == "3,5.7 - 2");
  CHECK(tokenize_13a("a 5-6 b-c") == "a 5 - 6 b-c");
  // "9-" becomes "9 - "; the second dash follows a space, not a digit, yet is already separated.
  CHECK(tokenize_13a("9--") == "9 - -");
}

TEST_CASE("13a unescapes entities once each - in order - and drops <skipped> and hyphenated breaks",
          "[eval][tokenizer_13a]") {
  CHECK(tokenize_13a("&quot;Hi&quot; &amp;lt; you") == "\" Hi \" < you");  // &amp;lt; -> &lt; -> <
  CHECK(tokenize_13a("mid&lt;dle&gt;") == "mid < dle >");
  CHECK(tokenize_13a("&amp;amp;") == "& amp ;");  // only one level of unescaping per entity
  CHECK(tokenize_13a("<skipped>x") == "x");
  CHECK(tokenize_13a("ab-\ncd") == "abcd");
  CHECK(tokenize_13a("a\nb") == "a b");
}

TEST_CASE("13a collapses Unicode whitespace like Python str.split and keeps multibyte letters",
          "[eval][tokenizer_13a]") {
  CHECK(tokenize_13a("  mix\u00a0\u3000space\t\tend ") == "mix space end");
  CHECK(tokenize_13a("é.ü,x") == "é . ü , x");
  CHECK(tokenize_13a("") == "");
  CHECK(tokenize_13a("\"") == "\"");
}

TEST_CASE("unicode helpers follow Python's whitespace set and escape invalid bytes", "[eval][tokenizer_13a]") {
  using namespace attn::eval;
  CHECK(is_python_space(U'\u00a0'));
  CHECK(is_python_space(U'\x1c'));
  CHECK_FALSE(is_python_space(U'\u200b'));  // zero-width space is not whitespace in Python
  CHECK(split_whitespace("a\u2009b  c") == std::vector<std::string>{"a", "b", "c"});
  CHECK(rstrip_whitespace("ab \u3000\r") == "ab");
  CHECK(decode_utf8("\xC3\xA9x") == U"\u00e9x");
  CHECK(decode_utf8("\xFFx") == U"\xDCFFx");          // invalid byte -> U+DC00 + byte
  CHECK(decode_utf8("\xC0\xAF") == U"\xDCC0\xDCAF");  // overlong '/' rejected byte by byte
}
