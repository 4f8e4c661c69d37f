#include "align/links.h"

#include <algorithm>

#include "core/check.h"

namespace attn::align {

Links ordered(Links links) {
  auto by_target = [](const Link& a, const Link& b) {
    return a.second != b.second ? a.second < b.second : a.first < b.first;
  };
  std::sort(links.begin(), links.end(), by_target);
  links.erase(std::unique(links.begin(), links.end()), links.end());
  return links;
}

std::string pharaoh_line(const Links& links) {
  std::string line;
  for (const auto& [source, target] : links)
    line += (line.empty() ? "" : " ") + std::to_string(source) + "-" + std::to_string(target);
  return line;
}

Links hard_links(const SoftAlignment& soft, float threshold) {
  ATTN_CHECK(threshold >= 0.f, "alignment threshold ", threshold, " must be at least 0");
  Links links;
  for (int64_t row = 0; row < soft.rows; ++row) {
    if (threshold > 0.f) {
      for (int64_t column = 0; column < soft.columns; ++column)
        if (soft.at(row, column) >= threshold) links.push_back({column, row});
      continue;
    }
    int64_t best = 0;
    for (int64_t column = 1; column <= soft.columns; ++column)
      if (soft.at(row, column) > soft.at(row, best)) best = column;
    if (best != soft.null_column()) links.push_back({best, row});
  }
  return links;
}

int64_t word_count(const WordOf& word_of) {
  int64_t words = 0;
  for (int64_t word : word_of) words = std::max(words, word + 1);
  return words;
}

Links word_links(const Links& piece_links, const WordOf& source_word, const WordOf& target_word) {
  Links links;
  for (const auto& [source, target] : piece_links) {
    ATTN_CHECK(
        source >= 0 && source < int64_t(source_word.size()) && target >= 0 && target < int64_t(target_word.size()),
        "link ", source, "-", target, " is outside ", source_word.size(), " x ", target_word.size(), " positions");
    if (source_word[source] >= 0 && target_word[target] >= 0)
      links.push_back({source_word[source], target_word[target]});
  }
  return ordered(std::move(links));
}

SoftAlignment word_level(const SoftAlignment& pieces, const WordOf& source_word, const WordOf& target_word) {
  ATTN_CHECK(int64_t(source_word.size()) == pieces.columns && int64_t(target_word.size()) == pieces.rows, "a ",
             pieces.rows, " x ", pieces.columns, " soft alignment for ", target_word.size(), " target and ",
             source_word.size(), " source positions");
  SoftAlignment words(word_count(target_word), word_count(source_word));
  std::vector<int64_t> pieces_of(words.rows, 0);  // target pieces per target word
  for (int64_t row = 0; row < pieces.rows; ++row) {
    const int64_t word = target_word[row];
    if (word < 0) continue;
    ++pieces_of[word];
    for (int64_t column = 0; column <= pieces.columns; ++column) {
      const bool null = column == pieces.null_column() || source_word[column] < 0;
      words.at(word, null ? words.null_column() : source_word[column]) += pieces.at(row, column);
    }
  }
  for (int64_t word = 0; word < words.rows; ++word)
    for (int64_t column = 0; column <= words.columns; ++column)
      if (pieces_of[word] > 0) words.at(word, column) /= float(pieces_of[word]);
  return words;
}

}  // namespace attn::align
