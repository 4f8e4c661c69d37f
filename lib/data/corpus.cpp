#include "data/corpus.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string_view>
#include <vector>

#include "core/check.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "data/line_sample.h"

namespace attn::data {

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  ATTN_CHECK(file.is_open(), "cannot open '", path, "'");
  return read_lines(file, "'" + path + "'");
}

std::vector<std::string> read_lines(std::istream& stream, const std::string& name) {
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(stream, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  ATTN_CHECK(!stream.bad(), "error while reading ", name);
  return lines;
}

TextFileStats text_file_stats(const std::string& path, int64_t max_bytes) {
  std::ifstream file(path, std::ios::binary);
  ATTN_CHECK(file.is_open(), "cannot open '", path, "'");
  TextFileStats stats;
  bool in_line = false, has_text = false;  // whether the current line has begun / holds text
  std::vector<char> block(1 << 20);
  int64_t left = max_bytes < 0 ? INT64_MAX : max_bytes;
  while (file && left > 0) {
    file.read(block.data(), std::streamsize(std::min<int64_t>(int64_t(block.size()), left)));
    left -= file.gcount();
    for (std::streamsize i = 0; i < file.gcount(); ++i) {
      const char c = block[size_t(i)];
      if (c == '\n') {
        stats.lines += 1;
        stats.text_lines += has_text;
        in_line = has_text = false;
      } else {
        in_line = true;
        has_text = has_text || std::string_view(kBlankCharacters).find(c) == std::string_view::npos;
      }
    }
  }
  ATTN_CHECK(!file.bad(), "error while reading '", path, "'");
  if (in_line) {  // a last line without "\n" counts
    stats.lines += 1;
    stats.text_lines += has_text;
  }
  return stats;
}

ParallelText read_parallel(const std::string& src_path, const std::string& tgt_path) {
  ParallelText text{read_lines(src_path), read_lines(tgt_path)};
  ATTN_CHECK(!text.src.empty(), "source file '", src_path, "' is empty");
  ATTN_CHECK(!text.tgt.empty(), "target file '", tgt_path, "' is empty");
  ATTN_CHECK(text.src.size() == text.tgt.size(), "parallel files differ in length: '", src_path, "' has ",
             text.src.size(), " lines, '", tgt_path, "' has ", text.tgt.size());
  return text;
}

namespace {

// Encodes one side and appends eos; the status says whether it fits in max_len.
PairStatus encode_side(const Vocab& vocab, const std::string& text, int max_len, const SegmentationSampling& sampling,
                       uint64_t key, std::vector<int32_t>& ids) {
  ids = sampling.on() ? vocab.encode_sampled(text, sampling, key) : vocab.encode(text);
  if (ids.empty()) return PairStatus::empty;
  ids.reserve(ids.size() + 1);  // exactly one more: push_back alone may double a window's memory
  ids.push_back(kEosId);
  return static_cast<int64_t>(ids.size()) > max_len ? PairStatus::too_long : PairStatus::kept;
}

}  // namespace

PairStatus encode_example(const std::string& src, const std::string& tgt, const Vocab& src_vocab,
                          const Vocab& tgt_vocab, int max_len, Example& example, const SegmentationSampling& sampling,
                          uint64_t key) {
  PairStatus src_status = encode_side(src_vocab, src, max_len, sampling, mix64(key, 0), example.src);
  PairStatus tgt_status = encode_side(tgt_vocab, tgt, max_len, sampling, mix64(key, 1), example.tgt);
  if (src_status == PairStatus::empty || tgt_status == PairStatus::empty) return PairStatus::empty;
  if (src_status == PairStatus::too_long || tgt_status == PairStatus::too_long) return PairStatus::too_long;
  return PairStatus::kept;
}

EncodedCorpus encode_corpus(const ParallelText& text, const Vocab& src_vocab, const Vocab& tgt_vocab, int max_len) {
  ATTN_CHECK(text.src.size() == text.tgt.size(), "encode_corpus: ", text.src.size(), " source lines but ",
             text.tgt.size(), " target lines");
  ATTN_CHECK(max_len >= 2, "encode_corpus: max_len ", max_len, " leaves no room for a token and eos");
  const auto n = static_cast<int64_t>(text.src.size());
  std::vector<Example> slots(n);
  std::vector<PairStatus> status(n);
  // A pair is two lines' encodings.
  parallel_for(n, 2 * kEncodeLineWork, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      try {
        slots[i].index = i;
        status[i] = encode_example(text.src[i], text.tgt[i], src_vocab, tgt_vocab, max_len, slots[i]);
      } catch (const std::exception& error) {
        ATTN_CHECK(false, "encode_corpus: line ", i + 1, ": ", error.what());
      }
    }
  });

  EncodedCorpus corpus;
  corpus.examples.reserve(n);
  for (int64_t i = 0; i < n; ++i) {
    if (status[i] == PairStatus::kept) corpus.examples.push_back(std::move(slots[i]));
    if (status[i] == PairStatus::too_long) ++corpus.skipped_long;
    if (status[i] == PairStatus::empty) ++corpus.skipped_empty;
  }
  return corpus;
}

}  // namespace attn::data
