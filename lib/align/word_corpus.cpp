#include "align/word_corpus.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "core/check.h"

namespace attn::align {

namespace {

void lower_in_place(std::string& word) {
  for (size_t i = 0; i < word.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(word[i]);
    if (c >= 'A' && c <= 'Z') {
      word[i] = char(c + 32);
    } else if (c == 0xC3 && i + 1 < word.size()) {  // U+00C0..U+00FF: 0xC3 then 0x80..0xBF
      unsigned char next = static_cast<unsigned char>(word[i + 1]);
      if (next >= 0x80 && next <= 0x9E && next != 0x97) word[i + 1] = char(next + 0x20);
      ++i;
    }
  }
}

std::ifstream open_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ATTN_CHECK(in.is_open(), "cannot open '", path, "': ", std::strerror(errno));
  return in;
}

}  // namespace

std::vector<std::string> split_words(std::string_view line, bool lowercase) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  std::vector<std::string> words;
  size_t begin = 0;
  while (begin < line.size()) {
    if (line[begin] == ' ' || line[begin] == '\t') {
      ++begin;
      continue;
    }
    size_t end = line.find_first_of(" \t", begin);
    if (end == std::string_view::npos) end = line.size();
    words.emplace_back(line.substr(begin, end - begin));
    if (lowercase) lower_in_place(words.back());
    begin = end;
  }
  return words;
}

int32_t WordVocabulary::add(const std::string& word) { return ids_.emplace(word, int32_t(ids_.size())).first->second; }

int32_t WordVocabulary::find(const std::string& word) const {
  const auto found = ids_.find(word);
  return found == ids_.end() ? -1 : found->second;
}

void read_word_pairs(const TextPair& files, bool lowercase, int64_t chunk_lines,
                     const std::function<void(const std::vector<WordPair>&)>& chunk) {
  ATTN_CHECK(chunk_lines >= 1, "chunk of ", chunk_lines, " lines: must be at least 1");
  std::ifstream source = open_text(files.source_path), target = open_text(files.target_path);
  std::vector<WordPair> pairs;
  std::string source_line, target_line;
  for (int64_t line = 1;; ++line) {
    const bool has_source = bool(std::getline(source, source_line));
    const bool has_target = bool(std::getline(target, target_line));
    ATTN_CHECK(!source.bad(), "reading '", files.source_path, "' failed at line ", line);
    ATTN_CHECK(!target.bad(), "reading '", files.target_path, "' failed at line ", line);
    if (has_source != has_target) {
      const std::string& ended = has_source ? files.target_path : files.source_path;
      const std::string& longer = has_source ? files.source_path : files.target_path;
      ATTN_CHECK(false, "'", ended, "' has ", line - 1, " lines but '", longer, "' has more: they must be aligned ",
                 "line by line");
    }
    if (!has_source) break;
    pairs.push_back({line, split_words(source_line, lowercase), split_words(target_line, lowercase)});
    if (int64_t(pairs.size()) == chunk_lines) {
      chunk(pairs);
      pairs.clear();
    }
  }
  if (!pairs.empty()) chunk(pairs);
}

}  // namespace attn::align
