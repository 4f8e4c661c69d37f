#pragma once
// The "13a" tokenizer of mteval-v13a.pl, as sacreBLEU 2.x applies it before BLEU.
//
// Steps, in order (each a left-to-right, non-overlapping replace like Python's):
//   1. drop "<skipped>"; drop "-\n" (a hyphenated line break); "\n" -> " ";
//      unescape &quot; &amp; &lt; &gt; (one pass each, in that order, so "&amp;lt;" -> "<").
//   2. pad the line with one space on each side, then four substitutions:
//      a. every char of { | } ~ [ \ ] ^ _ ` space ! " # $ % & ( ) * + : ; < = > ? @ /
//         -> " c "   (note: ' - . , are NOT in the set);
//      b. "xP" -> "x P " where P is '.' or ',' and x is not an ASCII digit;
//      c. "Px" -> " P x" where P is '.' or ',' and x is not an ASCII digit;
//      d. "9-" -> "9 - " (a dash after a digit).
//   3. collapse whitespace (Python str.split: any Unicode whitespace) to single spaces, trim.
// So "3.14" and "1,000" stay whole, "end." splits, "5-6" -> "5 - 6" but "a-b" stays.
#include <string>
#include <string_view>

namespace attn::eval {

std::string tokenize_13a(std::string_view line);

}  // namespace attn::eval
