#include "train/input_files.h"

#include <filesystem>
#include <fstream>

#include "core/check.h"
#include "data/corpus.h"

namespace attn::train {

namespace {

namespace fs = std::filesystem;

// One file of the config's data section, e.g. {"train_src", config.data.train_src}.
struct InputFile {
  const char* key;
  const std::string& path;
};

data::TextFileStats check_file(const InputFile& file) {
  const std::string key = std::string("config key data.") + file.key;
  ATTN_CHECK(!file.path.empty(), key, " is not set; training needs it");
  std::error_code error;
  fs::file_status status = fs::status(file.path, error);
  ATTN_CHECK(fs::exists(status), key, ": file '", file.path, "' does not exist");
  ATTN_CHECK(!fs::is_directory(status), key, ": '", file.path, "' is a directory, not a text file");
  ATTN_CHECK(std::ifstream(file.path).good(), key, ": cannot read '", file.path, "'");
  data::TextFileStats stats = data::text_file_stats(file.path);
  ATTN_CHECK(stats.text_lines > 0, key, ": file '", file.path, "' ",
             stats.lines == 0 ? "is empty" : "holds only blank lines", "; training needs sentences");
  return stats;
}

void check_aligned(const InputFile& src, const data::TextFileStats& src_stats, const InputFile& tgt,
                   const data::TextFileStats& tgt_stats) {
  ATTN_CHECK(src_stats.lines == tgt_stats.lines, "config keys data.", src.key, " and data.", tgt.key, ": '", src.path,
             "' has ", src_stats.lines, " lines but '", tgt.path, "' has ", tgt_stats.lines,
             "; the two sides must align line by line");
}

}  // namespace

void check_input_files(const io::Config& config) {
  const io::DataConfig& d = config.data;
  const InputFile files[] = {
      {"train_src", d.train_src}, {"train_tgt", d.train_tgt}, {"valid_src", d.valid_src}, {"valid_tgt", d.valid_tgt}};
  data::TextFileStats stats[4];
  for (int i = 0; i < 4; ++i) stats[i] = check_file(files[i]);
  check_aligned(files[0], stats[0], files[1], stats[1]);
  check_aligned(files[2], stats[2], files[3], stats[3]);
}

}  // namespace attn::train
