#pragma once
// Shared helpers for the data tests: temporary directories, generated text, tiny vocabularies.
// Nothing here reads the real corpus; everything is generated and fast.
#include <filesystem>
#include <string>

namespace attn::testing {

// A fresh directory under the system temp path, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

void write_file(const std::string& path, const std::string& text);

// `lines` lines of made-up words (syllables of a small alphabet), deterministic in `seed`.
std::string synthetic_text(int lines, uint64_t seed);

// A SentencePiece model ("unigram" or "bpe", 100 pieces) trained once per test process on
// synthetic text; returns the .model path.
const std::string& tiny_vocab_model(const std::string& type);

}  // namespace attn::testing
