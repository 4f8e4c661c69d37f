#pragma once
// A text to translate, cut into the sentences the model sees and the fixed pieces around them
// (line breaks and the spaces at a line's ends; for HTML, the markup), so that a translation
// is the same text with each sentence replaced by its translation.
//
//   TextTemplate t = html_template("<p>Hello <b>world</b></p>");
//   t.sentences == {"Hello", "world"}; t.pieces == {"<p>", " <b>", "</b></p>"}
//   render(t, {"Ciao", "mondo"}) == "<p>Ciao <b>mondo</b></p>"
#include <string>
#include <string_view>
#include <vector>

namespace attn::serve {

struct TextTemplate {
  std::vector<std::string> pieces;     // pieces.size() == sentences.size() + 1, around the sentences
  std::vector<std::string> sentences;  // as the model reads them: plain text, entities decoded
  bool html = false;                   // translations are escaped (&, <, >) when rendered
};

// Plain text: each line (split on '\n') with something other than spaces is one sentence; the
// line breaks and the spaces, tabs and '\r' at its ends stay as they are.
TextTemplate plain_text_template(std::string_view text);

// HTML: the markup (tags, comments, doctype, and the content of <script> and <style>) is kept
// byte for byte; each run of text between tags that holds more than whitespace is one sentence,
// with its character references decoded (&amp; &lt; &#233; &#xE9; ...) and inner whitespace
// collapsed to single spaces. A '<' that starts no tag is text; an unclosed tag at the end is
// markup to the end. Tags need not balance: nothing is parsed as a tree.
TextTemplate html_template(std::string_view html);

// The text with sentence i replaced by translations[i] (as many as there are sentences).
std::string render(const TextTemplate& text, const std::vector<std::string>& translations);

// & < > as &amp; &lt; &gt;.
std::string escape_html(std::string_view text);

}  // namespace attn::serve
