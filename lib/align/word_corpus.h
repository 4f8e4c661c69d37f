#pragma once
// The parallel text attn-align reads: two files line by line (line i of one translates line i
// of the other), cut into whitespace-separated words (spaces and tabs; no other tokenisation:
// give it tokenised text, as aligners and alignment gold sets use), read in chunks so a
// corpus of any size passes through bounded memory. Words become ids of one vocabulary per side.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace attn::align {

// Whitespace-separated words of `line` (a trailing CR is not part of the last word). With
// `lowercase`, A-Z and the Latin-1 capitals U+00C0-U+00DE (U+00D7 excepted: À..Þ, which covers
// the accented capitals of Italian, French, German and Spanish) are lowered; other bytes stay.
std::vector<std::string> split_words(std::string_view line, bool lowercase);

// word -> id, from 0 in order of first appearance.
class WordVocabulary {
 public:
  int32_t add(const std::string& word);
  int32_t find(const std::string& word) const;  // -1 for a word never added
  int32_t size() const { return int32_t(ids_.size()); }

 private:
  std::unordered_map<std::string, int32_t> ids_;
};

struct TextPair {
  std::string source_path, target_path;
};

// One line pair as words, and as ids once encoded.
struct WordPair {
  int64_t line = 0;  // 1-based line number in its files
  std::vector<std::string> source, target;
};
struct EncodedPair {
  std::vector<int32_t> source, target;
};

// Reads `files` in chunks of up to `chunk_lines` pairs, each handed to `chunk` in file order.
// Throws attn::Error naming the file that cannot be opened or read, and when one file ends
// before the other (naming both and the line where the shorter ended).
void read_word_pairs(const TextPair& files, bool lowercase, int64_t chunk_lines,
                     const std::function<void(const std::vector<WordPair>&)>& chunk);

}  // namespace attn::align
