#pragma once
// sample_lines: up to N text lines drawn from a set of files without reading them whole, so that
// the time to draw them depends on N and not on the files' sizes (train_vocab's sample of a
// corpus much larger than memory).
//
// A sampled pass: each file is cut into blocks of `block_bytes`; blocks are visited in a random
// order (seeded, without repetition) and each gives every line that starts inside it, complete
// (the first partial line belongs to the block before). N is split over the files in
// proportion to their byte sizes. Lines lose a trailing "\r" as in data::read_lines; blank
// lines (see has_text) and lines longer than `max_line_bytes` are not sampled.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn::data {

// The characters that make no text: space, tab, CR, VT, FF.
inline constexpr const char* kBlankCharacters = " \t\r\v\f";
// Whether a line holds a character other than those (text_file_stats's "text line").
bool has_text(std::string_view line);

struct LineSampleOptions {
  int64_t lines = 0;                  // N: how many lines to draw in all
  uint64_t seed = 1;                  // the same seed and files give the same sample
  int64_t block_bytes = 64 << 10;     // read at a random offset at a time
  int64_t max_line_bytes = 64 << 10;  // longer lines are passed over (SentencePiece drops them)
};

struct FileSample {
  std::string path;
  int64_t quota = 0;       // this file's share of N
  int64_t lines = 0;       // lines drawn (below quota only when the file has fewer text lines)
  int64_t bytes_read = 0;  // what the pass read from the file
};

struct LineSample {
  std::vector<std::string> lines;  // file by file, blocks in the order they were visited
  std::vector<FileSample> files;   // one per input, in input order
};

// Throws attn::Error naming the file when one cannot be opened or read.
LineSample sample_lines(const std::vector<std::string>& paths, const LineSampleOptions& options);

// The total size in bytes of `paths` (what decides whether a corpus is sampled at all).
int64_t total_bytes(const std::vector<std::string>& paths);

}  // namespace attn::data
