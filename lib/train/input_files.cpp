#include "train/input_files.h"

#include <filesystem>
#include <fstream>

#include "core/check.h"
#include "data/corpus.h"
#include "data/training_stream.h"

namespace attn::train {

namespace {

namespace fs = std::filesystem;

// One file of the config's data section, e.g. {"data.valid_src", config.data.valid_src}.
struct InputFile {
  std::string key;
  const std::string& path;
};

void check_readable(const InputFile& file) {
  const std::string key = "config key " + file.key;
  ATTN_CHECK(!file.path.empty(), key, " is not set; training needs it");
  std::error_code error;
  fs::file_status status = fs::status(file.path, error);
  ATTN_CHECK(fs::exists(status), key, ": file '", file.path, "' does not exist");
  ATTN_CHECK(!fs::is_directory(status), key, ": '", file.path, "' is a directory, not a text file");
  ATTN_CHECK(std::ifstream(file.path).good(), key, ": cannot read '", file.path, "'");
}

void require_text(const InputFile& file, const data::TextFileStats& stats) {
  ATTN_CHECK(stats.text_lines > 0, "config key ", file.key, ": file '", file.path, "' ",
             stats.lines == 0 ? "is empty" : "holds only blank lines", "; training needs sentences");
}

// Every line counted: the file is small enough to read through now.
data::TextFileStats check_small_file(const InputFile& file) {
  check_readable(file);
  data::TextFileStats stats = data::text_file_stats(file.path);
  require_text(file, stats);
  return stats;
}

// A large file is only sampled: its first MiB must hold text.
void check_large_file(const InputFile& file) {
  check_readable(file);
  require_text(file, data::text_file_stats(file.path, int64_t(1) << 20));
}

void check_aligned(const InputFile& src, const data::TextFileStats& src_stats, const InputFile& tgt,
                   const data::TextFileStats& tgt_stats) {
  ATTN_CHECK(src_stats.lines == tgt_stats.lines, "config keys ", src.key, " and ", tgt.key, ": '", src.path, "' has ",
             src_stats.lines, " lines but '", tgt.path, "' has ", tgt_stats.lines,
             "; the two sides must align line by line");
}

void check_pair(const InputFile& src, const InputFile& tgt, int64_t count_lines_up_to) {
  check_readable(src);
  check_readable(tgt);
  const auto bytes = static_cast<int64_t>(fs::file_size(src.path) + fs::file_size(tgt.path));
  if (bytes > count_lines_up_to) {
    check_large_file(src);
    check_large_file(tgt);
    return;
  }
  check_aligned(src, check_small_file(src), tgt, check_small_file(tgt));
}

// A corpus's alignments file: readable, and (when small enough to count) as many lines as the
// corpus. Empty lines are pairs without links, so a file of blank lines is allowed.
void check_alignments(const InputFile& links, const InputFile& src, int64_t count_lines_up_to) {
  check_readable(links);
  if (int64_t(fs::file_size(links.path) + fs::file_size(src.path)) > count_lines_up_to) return;
  check_aligned(src, data::text_file_stats(src.path), links, data::text_file_stats(links.path));
}

}  // namespace

void check_input_files(const io::Config& config, int64_t count_lines_up_to) {
  const io::DataConfig& d = config.data;
  const std::vector<io::CorpusConfig> corpora = d.training_corpora();
  for (size_t i = 0; i < corpora.size(); ++i)
    check_pair({d.corpus_key(i, true), corpora[i].src}, {d.corpus_key(i, false), corpora[i].tgt}, count_lines_up_to);
  if (config.train.guided_alignment.on()) {
    for (size_t i = 0; i < corpora.size(); ++i)
      if (!corpora[i].alignments.empty())
        check_alignments({d.alignments_key(i), corpora[i].alignments}, {d.corpus_key(i, true), corpora[i].src},
                         count_lines_up_to);
  }
  // Validation sets are read whole anyway.
  check_pair({"data.valid_src", d.valid_src}, {"data.valid_tgt", d.valid_tgt}, INT64_MAX);
  if (!d.valid_alignment_gold.empty()) check_small_file({"data.valid_alignment_gold", d.valid_alignment_gold});
}

std::unique_ptr<data::TrainingStream> make_training_stream(const io::Config& config, const run::Vocabularies& vocab) {
  std::vector<data::CorpusFiles> corpora;
  // The alignments are read only for a guided loss: with weight 0 the stream is the one without.
  const bool guided = config.train.guided_alignment.on();
  for (const io::CorpusConfig& corpus : config.data.training_corpora())
    corpora.push_back({corpus.src, corpus.tgt, corpus.weight, guided ? corpus.alignments : std::string()});
  data::StreamOptions options;
  options.buffer_pairs = config.data.buffer_pairs;
  options.max_len = config.data.max_len;
  options.batching.batch_tokens = config.train.batch_tokens;
  options.batching.pad_multiple = config.train.pad_multiple;
  options.batching.seed = static_cast<uint64_t>(config.train.seed);
  options.batching.shuffle = true;
  options.threads = config.train.threads;
  options.sampling.alpha = config.vocab.sampling_alpha;
  options.sampling.nbest = config.vocab.sampling_nbest;
  options.concat.prob = config.data.concat_prob;
  options.concat.max_pairs = config.data.concat_max;
  options.alignment_level = config.data.train_alignments_level;
  return std::make_unique<data::TrainingStream>(std::move(corpora), vocab.source, vocab.target, options);
}

}  // namespace attn::train
