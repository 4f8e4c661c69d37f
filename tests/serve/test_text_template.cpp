#include <catch2/catch.hpp>

#include "serve/text_template.h"

using namespace attn::serve;

namespace {

// Each sentence's "translation": its words reversed, so a misplaced one shows.
std::vector<std::string> reversed_words(const std::vector<std::string>& sentences) {
  std::vector<std::string> out;
  for (const std::string& sentence : sentences) {
    std::vector<std::string> words;
    size_t begin = 0;
    while (begin <= sentence.size()) {
      size_t end = sentence.find(' ', begin);
      if (end == std::string::npos) end = sentence.size();
      words.push_back(sentence.substr(begin, end - begin));
      begin = end + 1;
    }
    std::string joined;
    for (auto it = words.rbegin(); it != words.rend(); ++it) joined += (joined.empty() ? "" : " ") + *it;
    out.push_back(joined);
  }
  return out;
}

}  // namespace

TEST_CASE("plain text: one sentence per line - line breaks and edge spaces kept", "[serve][template]") {
  const TextTemplate t = plain_text_template("  Hello world \n\nGood bye\r\n");
  CHECK(t.sentences == std::vector<std::string>{"Hello world", "Good bye"});
  CHECK(render(t, reversed_words(t.sentences)) == "  world Hello \n\nbye Good\r\n");
  CHECK(render(t, t.sentences) == "  Hello world \n\nGood bye\r\n");
  const TextTemplate blank = plain_text_template(" \n ");
  CHECK(blank.sentences.empty());
  CHECK(render(blank, {}) == " \n ");
}

TEST_CASE("HTML: markup kept - text between tags translated", "[serve][template]") {
  const TextTemplate t = html_template("<p class=\"a>b\">Hello <b>big world</b>!</p>");
  CHECK(t.sentences == std::vector<std::string>{"Hello", "big world", "!"});
  CHECK(t.pieces == std::vector<std::string>{"<p class=\"a>b\">", " <b>", "</b>", "</p>"});
  CHECK(render(t, reversed_words(t.sentences)) == "<p class=\"a>b\">Hello <b>world big</b>!</p>");
}

TEST_CASE("HTML: references decoded for the model - translations escaped", "[serve][template]") {
  const TextTemplate t = html_template("<i>Tom &amp; Jerry&#33; caf&#xE9;\n  x &lt; y &bogus; &</i>");
  REQUIRE(t.sentences.size() == 1);
  CHECK(t.sentences[0] == "Tom & Jerry! caf\xC3\xA9 x < y &bogus; &");
  CHECK(render(t, {"a < b & c"}) == "<i>a &lt; b &amp; c</i>");
}

TEST_CASE("HTML: comments - script and style are markup - stray '<' is text", "[serve][template]") {
  const TextTemplate t =
      html_template("<!-- note <b> --><script>var s = '<p>x</p>';</script><STYLE>p{}</STYLE>1 < 2<br/>");
  CHECK(t.sentences == std::vector<std::string>{"1 < 2"});
  CHECK(t.pieces.front() == "<!-- note <b> --><script>var s = '<p>x</p>';</script><STYLE>p{}</STYLE>");
}

TEST_CASE("HTML: unclosed and nested tags never lose a byte", "[serve][template]") {
  for (const std::string html : {"<div><p>one<p>two</div></span>three", "text <b unclosed", "<b><i>x</b></i>",
                                 "<!-- open comment", "<script>never closed", "<", "a<", "<<>>", "&#x110000; &#0;"}) {
    const TextTemplate t = html_template(html);
    INFO(html);
    CHECK(t.pieces.size() == t.sentences.size() + 1);
    // Rendered with its own sentences and read again: the same sentences (the escaping undone).
    CHECK(html_template(render(t, t.sentences)).sentences == t.sentences);
  }
  CHECK(html_template("<div><p>one<p>two</div>").sentences == std::vector<std::string>{"one", "two"});
  CHECK(html_template("text <b unclosed").sentences == std::vector<std::string>{"text"});
  CHECK(render(html_template("<b><i>x</b></i>"), {"y"}) == "<b><i>y</b></i>");
  CHECK(html_template("<p>&#32;</p>").sentences.empty());
}
