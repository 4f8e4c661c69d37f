#include "data/line_sample.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <unordered_map>

#include "core/check.h"
#include "core/rng.h"

namespace attn::data {

bool has_text(std::string_view line) { return line.find_first_not_of(kBlankCharacters) != std::string_view::npos; }

int64_t total_bytes(const std::vector<std::string>& paths) {
  int64_t total = 0;
  for (const auto& path : paths) {
    std::error_code error;
    const auto size = std::filesystem::file_size(path, error);
    ATTN_CHECK(!error, "cannot read '", path, "': ", error.message());
    total += static_cast<int64_t>(size);
  }
  return total;
}

namespace {

// N split over the files in proportion to their sizes (largest remainders, so that the shares
// add up to N); a non-empty file gets at least one line, so that every input is looked at.
std::vector<int64_t> quotas(const std::vector<int64_t>& sizes, int64_t lines) {
  const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  std::vector<int64_t> shares(sizes.size(), 0);
  if (total == 0) return shares;
  std::vector<double> remainders(sizes.size());
  int64_t given = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const double exact = static_cast<double>(lines) * (static_cast<double>(sizes[i]) / static_cast<double>(total));
    shares[i] = static_cast<int64_t>(exact);
    remainders[i] = exact - static_cast<double>(shares[i]);
    given += shares[i];
  }
  std::vector<size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return remainders[a] > remainders[b]; });
  for (size_t k = 0; given < lines && k < order.size(); ++k, ++given) shares[order[k]] += 1;
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] > 0) shares[i] = std::max<int64_t>(shares[i], 1);
  return shares;
}

// The block indices 0..count-1 in a random order without repetition, drawn one at a time: a
// Fisher-Yates shuffle that remembers only the swapped entries, so its memory and time grow
// with the blocks visited, not with the file.
class BlockOrder {
 public:
  BlockOrder(int64_t count, uint64_t seed) : count_(count), rng_(seed) {}
  bool done() const { return drawn_ == count_; }
  int64_t next() {
    const int64_t pick = drawn_ + static_cast<int64_t>(rng_.below(static_cast<uint64_t>(count_ - drawn_)));
    const int64_t block = at(pick);
    swapped_[pick] = at(drawn_);
    drawn_ += 1;
    return block;
  }

 private:
  int64_t at(int64_t i) const {
    auto found = swapped_.find(i);
    return found == swapped_.end() ? i : found->second;
  }
  int64_t count_, drawn_ = 0;
  Rng rng_;
  std::unordered_map<int64_t, int64_t> swapped_;
};

constexpr int64_t kContinuationBytes = 4096;

// Reads one file's blocks and keeps the lines that start in them.
class FileSampler {
 public:
  FileSampler(FileSample& file, const LineSampleOptions& options, int64_t size)
      : file_(file), options_(options), size_(size), stream_(file.path, std::ios::binary) {
    ATTN_CHECK(stream_.is_open(), "cannot open '", file.path, "'");
  }

  // Appends the lines of block `block` to `out` until the file's quota is met.
  void take_block(int64_t block, std::vector<std::string>& out) {
    const int64_t start = block * options_.block_bytes, end = std::min(size_, start + options_.block_bytes);
    // From the byte before the block: a line starts at `start` only if that byte is "\n".
    const int64_t from = start == 0 ? 0 : start - 1;
    std::string buffer = read(from, end - from);
    size_t line_start = 0;
    if (start > 0) {
      const size_t newline = buffer.find('\n');
      if (newline == std::string::npos) return;  // inside a line that began in an earlier block
      line_start = newline + 1;
    }
    while (line_start < buffer.size() && file_.lines < file_.quota) {
      size_t newline = buffer.find('\n', line_start);
      std::string line;
      if (newline == std::string::npos) {
        line = buffer.substr(line_start) + rest_of_line(from + static_cast<int64_t>(buffer.size()));
        newline = buffer.size();
      } else {
        line = buffer.substr(line_start, newline - line_start);
      }
      keep(std::move(line), out);
      line_start = newline + 1;
    }
  }

 private:
  std::string read(int64_t offset, int64_t count) {
    std::string bytes(static_cast<size_t>(count), '\0');
    stream_.clear();
    stream_.seekg(offset);
    stream_.read(bytes.data(), count);
    ATTN_CHECK(!stream_.bad(), "error while reading '", file_.path, "'");
    bytes.resize(static_cast<size_t>(stream_.gcount()));
    file_.bytes_read += stream_.gcount();
    return bytes;
  }

  // The end of a line that runs past its block: up to its "\n" or the end of the file. Past
  // max_line_bytes it is only scanned (keep drops it), so memory stays bounded.
  std::string rest_of_line(int64_t offset) {
    std::string rest;
    while (offset < size_) {
      // Small reads: most lines end within a few bytes of their block's end.
      std::string chunk = read(offset, std::min({kContinuationBytes, options_.block_bytes, size_ - offset}));
      if (chunk.empty()) break;
      offset += static_cast<int64_t>(chunk.size());
      const size_t newline = chunk.find('\n');
      if (static_cast<int64_t>(rest.size()) <= options_.max_line_bytes) rest += chunk.substr(0, newline);
      if (newline != std::string::npos) break;
    }
    return rest;
  }

  void keep(std::string line, std::vector<std::string>& out) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!has_text(line) || static_cast<int64_t>(line.size()) > options_.max_line_bytes) return;
    out.push_back(std::move(line));
    file_.lines += 1;
  }

  FileSample& file_;
  const LineSampleOptions& options_;
  int64_t size_;
  std::ifstream stream_;
};

}  // namespace

LineSample sample_lines(const std::vector<std::string>& paths, const LineSampleOptions& options) {
  ATTN_CHECK(options.lines > 0, "sample_lines: the number of lines must be positive");
  ATTN_CHECK(options.block_bytes > 0 && options.max_line_bytes > 0,
             "sample_lines: block and line sizes must be positive");
  std::vector<int64_t> sizes;
  for (const auto& path : paths) sizes.push_back(total_bytes({path}));
  const std::vector<int64_t> shares = quotas(sizes, options.lines);

  LineSample sample;
  for (size_t i = 0; i < paths.size(); ++i) {
    FileSample& file = sample.files.emplace_back(FileSample{paths[i], shares[i]});
    if (file.quota == 0) continue;
    FileSampler sampler(file, options, sizes[i]);
    // Each file its own stream: its sample does not depend on the files before it.
    BlockOrder order((sizes[i] + options.block_bytes - 1) / options.block_bytes, mix64(options.seed, i));
    while (file.lines < file.quota && !order.done()) sampler.take_block(order.next(), sample.lines);
  }
  return sample;
}

}  // namespace attn::data
