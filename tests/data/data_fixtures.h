#pragma once
// Shared helpers for the data tests: temporary directories, generated text, tiny vocabularies.
// Nothing here reads the real corpus; everything is generated and fast.
#include <filesystem>
#include <string>
#include <vector>

#include "temp_dir.h"

namespace attn::testing {

void write_file(const std::string& path, const std::string& text);

// `lines` lines of made-up words (syllables of a small alphabet), deterministic in `seed`.
std::string synthetic_text(int lines, uint64_t seed);
// The same lines, one string each.
std::vector<std::string> synthetic_lines(int lines, uint64_t seed);

// A SentencePiece model ("unigram" or "bpe", 100 pieces) trained once per test process on
// synthetic text; returns the .model path.
const std::string& tiny_vocab_model(const std::string& type);

}  // namespace attn::testing
