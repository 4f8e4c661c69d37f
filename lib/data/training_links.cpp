#include "data/training_links.h"

#include <algorithm>
#include <charconv>

#include "core/check.h"

namespace attn::data {

namespace {

// "▁" (U+2581), SentencePiece's mark of a piece that follows a space.
constexpr std::string_view kWordStart = "\xE2\x96\x81";

bool special(int32_t id) { return id == kEosId || id == kBosId || id == kPadId; }

bool parse_index(std::string_view text, int64_t& value) {
  if (text.empty()) return false;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size() && value >= 0;
}

template <class Visit>
void for_each_token(std::string_view line, Visit visit) {
  size_t at = 0;
  while (at < line.size()) {
    const size_t begin = line.find_first_not_of(" \t", at);
    if (begin == std::string_view::npos) return;
    const size_t end = std::min(line.find_first_of(" \t", begin), line.size());
    visit(line.substr(begin, end - begin));
    at = end;
  }
}

// The text positions (eos excluded) of each word: positions[w] lists word w's pieces.
std::vector<std::vector<int32_t>> word_pieces(const std::vector<int32_t>& ids, const Vocab& vocab) {
  const std::vector<int64_t> words = piece_words(ids, vocab);
  std::vector<std::vector<int32_t>> pieces;
  for (size_t p = 0; p < words.size(); ++p) {
    if (words[p] < 0) continue;
    if (size_t(words[p]) >= pieces.size()) pieces.resize(size_t(words[p]) + 1);
    pieces[size_t(words[p])].push_back(int32_t(p));
  }
  return pieces;
}

int64_t text_pieces(const std::vector<int32_t>& ids) {
  return int64_t(ids.size()) - (!ids.empty() && ids.back() == kEosId ? 1 : 0);
}

void check_in_range(int64_t source, int64_t target, int64_t source_length, int64_t target_length, const char* unit) {
  ATTN_CHECK(source < source_length && target < target_length, "link ", source, "-", target, " lies beyond the pair (",
             source_length, " source and ", target_length, " target ", unit, ")");
}

}  // namespace

std::vector<int64_t> piece_words(const std::vector<int32_t>& ids, const Vocab& vocab) {
  std::vector<int64_t> words(ids.size(), -1);
  int64_t word = -1;
  bool space = true;
  std::vector<size_t> lone_marks;  // lone "▁" pieces waiting for their word
  for (size_t p = 0; p < ids.size(); ++p) {
    if (special(ids[p])) continue;
    const std::string text = vocab.piece(ids[p]);
    std::string_view piece = text;
    while (piece.substr(0, kWordStart.size()) == kWordStart) {
      piece.remove_prefix(kWordStart.size());
      space = true;
    }
    if (piece.empty()) {
      lone_marks.push_back(p);
      continue;
    }
    if (space || word < 0) ++word;
    space = false;
    words[p] = word;
    for (size_t mark : lone_marks) words[mark] = word;
    lone_marks.clear();
  }
  return words;
}

int64_t whitespace_word_count(std::string_view line) {
  int64_t count = 0;
  for_each_token(line, [&](std::string_view) { ++count; });
  return count;
}

std::vector<std::pair<int64_t, int64_t>> parse_training_links(std::string_view line) {
  std::vector<std::pair<int64_t, int64_t>> links;
  for_each_token(line, [&](std::string_view token) {
    const size_t dash = token.find('-');
    std::pair<int64_t, int64_t> link;
    const bool ok = dash != std::string_view::npos && parse_index(token.substr(0, dash), link.first) &&
                    parse_index(token.substr(dash + 1), link.second);
    ATTN_CHECK(ok, "\"", std::string(token), "\" is not a link \"i-j\" (source and target positions from 0)");
    links.push_back(link);
  });
  return links;
}

PieceLinks pair_links(std::string_view line, AlignmentLevel level, const std::string& src_text,
                      const std::string& tgt_text, const std::vector<int32_t>& src_ids,
                      const std::vector<int32_t>& tgt_ids, const Vocab& src_vocab, const Vocab& tgt_vocab) {
  const auto links = parse_training_links(line);
  PieceLinks pieces;
  if (level == AlignmentLevel::pieces) {
    for (const auto& [s, t] : links) {
      check_in_range(s, t, text_pieces(src_ids), text_pieces(tgt_ids), "pieces");
      pieces.emplace_back(int32_t(s), int32_t(t));
    }
  } else {
    const int64_t source_words = whitespace_word_count(src_text), target_words = whitespace_word_count(tgt_text);
    const auto source = word_pieces(src_ids, src_vocab), target = word_pieces(tgt_ids, tgt_vocab);
    for (const auto& [s, t] : links) {
      check_in_range(s, t, source_words, target_words, "words");
      if (size_t(s) >= source.size() || size_t(t) >= target.size()) continue;
      for (int32_t a : source[size_t(s)])
        for (int32_t b : target[size_t(t)]) pieces.emplace_back(a, b);
    }
  }
  std::sort(pieces.begin(), pieces.end(), [](const PieceLink& x, const PieceLink& y) {
    return std::pair(x.second, x.first) < std::pair(y.second, y.first);
  });
  pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
  return pieces;
}

}  // namespace attn::data
