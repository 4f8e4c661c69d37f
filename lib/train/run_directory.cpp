#include "train/run_directory.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/checkpoint.h"
#include "io/checksum.h"
#include "io/safetensors.h"
#include "models/model_factory.h"

namespace attn::train {

namespace fs = std::filesystem;

namespace {

// ---- what a directory holds ----------------------------------------------------------------

// The files a run writes besides its vocabulary; any of them makes a directory hold a run.
const std::vector<std::string> kRunFiles = {"config.json", "vocab.sha256", "train.log.jsonl",
                                            "checkpoint.best.safetensors", "checkpoint.last.safetensors"};
// Vocabulary files, joint or separate: alone, they are a vocabulary supplied in advance.
const std::vector<std::string> kVocabFiles = {"spm.model",     "spm.vocab",     "spm.src.model",
                                              "spm.src.vocab", "spm.tgt.model", "spm.tgt.vocab"};

std::string name_of(const std::string& path) { return fs::path(path).filename().string(); }

std::string join(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ", ") + item;
  return joined;
}

// Those of `names` present in `dir`, in the order given.
std::vector<std::string> present(const std::string& dir, const std::vector<std::string>& names) {
  std::vector<std::string> found;
  for (const std::string& name : names)
    if (fs::exists(fs::path(dir) / name)) found.push_back(name);
  return found;
}

bool is_run_file(const std::string& name) {
  auto listed = [&](const std::vector<std::string>& names) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  return listed(kRunFiles) || listed(kVocabFiles);
}

// A run file, or the leftover of an interrupted write of one: PATH.tmp (io/atomic_file.h) or
// spm.tmp.model (a vocabulary being trained).
bool belongs_to_run(const std::string& name) {
  const size_t tmp = name.find(".tmp");
  return is_run_file(name) || (tmp != std::string::npos && is_run_file(name.substr(0, tmp) + name.substr(tmp + 4)));
}

[[noreturn]] void refuse_unfinished_run(const run::RunPaths& paths, const std::string& prefix) {
  std::vector<std::string> files = present(paths.dir, kRunFiles), vocab = present(paths.dir, kVocabFiles);
  files.insert(files.end(), vocab.begin(), vocab.end());
  throw Error(prefix + "the run directory " + paths.dir + " holds an unfinished run (" + join(files) + ") but no " +
              name_of(paths.last_checkpoint) +
              " to continue from: it was stopped before its first save, or that file was deleted. Start it over "
              "with --restart, which moves these files into a dated subfolder of " +
              paths.dir + ", or set another output_dir");
}

// attn-quantize's runs hold int8 weights for decoding: nothing to train from.
void refuse_quantized_run(const run::RunPaths& paths, const std::string& prefix) {
  for (const std::string& checkpoint : {paths.best_checkpoint, paths.last_checkpoint})
    ATTN_CHECK(!fs::exists(checkpoint) || !io::is_quantized(io::read_safetensors_metadata(checkpoint)), prefix,
               "the run directory ", paths.dir, " is an int8 run written by attn-quantize (", name_of(checkpoint),
               " is quantised): it is for decoding and cannot be trained; resume the run it was made from");
}

void check_resumable(const run::RunPaths& paths) {
  refuse_quantized_run(paths, "--resume: ");
  if (fs::exists(paths.last_checkpoint)) return;
  ATTN_CHECK(!present(paths.dir, kRunFiles).empty(), "--resume: there is no run to resume in ", paths.dir, " (no ",
             name_of(paths.last_checkpoint), ")");
  refuse_unfinished_run(paths, "--resume: ");
}

// Never overwrite a run by accident: an existing run continues only when asked to.
void check_fresh(const run::RunPaths& paths) {
  if (present(paths.dir, kRunFiles).empty()) return;
  refuse_quantized_run(paths, "");
  ATTN_CHECK(!fs::exists(paths.last_checkpoint), "the run directory ", paths.dir,
             " already holds a run. Continue it with --resume, start it over with --restart (which moves its files "
             "into a dated subfolder), or set another output_dir");
  refuse_unfinished_run(paths, "");
}

[[noreturn]] void refuse_in_use(const run::RunPaths& paths) {
  const pid_t holder = io::lock_holder(paths.lock);
  throw Error("the run directory " + paths.dir + " is in use by attn-train process " +
              (holder > 0 ? std::to_string(holder) : std::string("(unknown)")) + ", which holds " + paths.lock +
              "; wait for it to end or stop it, or set another output_dir");
}

io::FileLock lock_run_directory(const run::RunPaths& paths) {
  std::optional<io::FileLock> lock = io::FileLock::try_lock(paths.lock);
  if (!lock) refuse_in_use(paths);
  return std::move(*lock);
}

// ---- the vocabulary and its record ---------------------------------------------------------

// SentencePiece writes PREFIX.model and PREFIX.vocab in place. Here they go under a temporary
// prefix and are renamed once complete (.model last: its presence means "trained"), so a run
// killed while its vocabulary trains never leaves a truncated one behind.
void train_one(const io::Config& config, const std::vector<std::string>& inputs, const std::string& model_path) {
  const std::string prefix = model_path.substr(0, model_path.size() - std::string(".model").size());
  data::VocabTrainOptions options;
  options.inputs = inputs;
  options.model_prefix = prefix + ".tmp";
  options.type = config.vocab.type;
  options.vocab_size = config.vocab.size;
  options.character_coverage = static_cast<float>(config.vocab.character_coverage);
  options.max_sentences = config.vocab.max_sentences;
  options.seed = static_cast<uint64_t>(config.train.seed);
  options.threads = config.train.threads;
  spdlog::info("training a {} {} SentencePiece vocabulary -> {}", config.vocab.size, choice_name(config.vocab.type),
               model_path);
  train_vocab(options);
  fs::rename(options.model_prefix + ".vocab", prefix + ".vocab");
  fs::rename(options.model_prefix + ".model", model_path);
}

// The model is built for the vocabulary's size, and config.json must say the same.
void check_vocab_size(const io::Config& config, const std::string& path, const data::Vocab& vocab) {
  ATTN_CHECK(vocab.size() == config.vocab.size, path, " has ", vocab.size(), " pieces but config key vocab.size is ",
             config.vocab.size, ": set vocab.size to ", vocab.size(), " to use this vocabulary");
}

void check_vocab_sizes(const io::Config& config, const run::RunPaths& paths, const run::Vocabularies& vocab) {
  check_vocab_size(config, paths.source_vocab, vocab.source);
  check_vocab_size(config, paths.target_vocab, vocab.target);
}

// A vocabulary placed in the directory before the first run must fit the config.
void check_supplied_vocabularies(const io::Config& config, const run::RunPaths& paths) {
  for (const std::string& path : {paths.source_vocab, paths.target_vocab})
    if (fs::exists(path)) check_vocab_size(config, path, data::Vocab::load(path));
}

// --resume: the run's own vocabulary, checked against both records before anything is
// written; never a new one.
run::Vocabularies resumed_vocabularies(const io::Config& config, const run::RunPaths& paths) {
  for (const std::string& path : {paths.source_vocab, paths.target_vocab})
    ATTN_CHECK(fs::exists(path), "--resume: ", path,
               " is missing; the run's checkpoints work only with the vocabulary they were trained with: put it back");
  run::Vocabularies vocab = run::load_vocabularies(paths);
  std::optional<run::VocabDigests> record = run::read_vocab_record(paths);
  if (record) run::check_vocab_record(paths, *record, vocab.digests);
  const std::map<std::string, std::string> metadata = io::read_safetensors_metadata(paths.last_checkpoint);
  run::check_checkpoint_vocabulary(paths.last_checkpoint, metadata, vocab.digests);
  run::check_checkpoint_model(paths.last_checkpoint, metadata, config);  // before config.json is rewritten
  check_vocab_sizes(config, paths, vocab);  // the run's own vocabulary, with vocab.size changed by --set
  io::write_file_atomically(paths.config, io::config_to_string(config) + "\n");
  if (!record) run::write_vocab_record(paths, vocab.digests);  // a run from before the record: from now on
  return vocab;
}

// A new run: the config first (a run killed from here on leaves an unfinished run, which the
// next attn-train refuses), then the vocabulary, trained unless supplied, and its record.
run::Vocabularies new_vocabularies(const io::Config& config, const run::RunPaths& paths) {
  check_supplied_vocabularies(config, paths);
  // Atomic: a kill while it is written must not leave a run that load_run cannot read.
  io::write_file_atomically(paths.config, io::config_to_string(config) + "\n");
  std::vector<std::string> sources, targets;
  for (const io::CorpusConfig& corpus : config.data.training_corpora()) {
    sources.push_back(corpus.src);
    targets.push_back(corpus.tgt);
  }
  if (config.vocab.joint) {
    sources.insert(sources.end(), targets.begin(), targets.end());
    if (!fs::exists(paths.source_vocab)) train_one(config, sources, paths.source_vocab);
  } else {
    if (!fs::exists(paths.source_vocab)) train_one(config, sources, paths.source_vocab);
    if (!fs::exists(paths.target_vocab)) train_one(config, targets, paths.target_vocab);
  }
  run::Vocabularies vocab = run::load_vocabularies(paths);
  run::write_vocab_record(paths, vocab.digests);
  return vocab;
}

// The folder for --restart, created: previous-run-YYYYMMDD-HHMMSS, or with -2, -3 ... when a
// restart in the same second made that one already.
fs::path new_aside_folder(const run::RunPaths& paths, std::time_t when) {
  std::tm local{};
  localtime_r(&when, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "previous-run-%Y%m%d-%H%M%S", &local);
  for (int attempt = 1;; ++attempt) {
    fs::path folder = fs::path(paths.dir) / (stamp + (attempt > 1 ? "-" + std::to_string(attempt) : std::string()));
    std::error_code error;
    if (fs::create_directory(folder, error)) return folder;
    ATTN_CHECK(!error, "cannot create ", folder.string(), ": ", error.message());
  }
}

}  // namespace

void check_can_start(const run::RunPaths& paths, StartMode mode) {
  if (mode != StartMode::resume) return;
  ATTN_CHECK(fs::is_directory(paths.dir), "--resume: there is no run to resume: the run directory ", paths.dir,
             " (config key output_dir) does not exist");
  // A running trainer's directory may not hold checkpoint.last yet: say it is in use instead.
  if (io::lock_is_held(paths.lock)) refuse_in_use(paths);
  check_resumable(paths);
}

OpenedRun open_run_directory(const io::Config& config, const run::RunPaths& paths, StartMode mode) {
  std::error_code error;
  fs::create_directories(paths.dir, error);
  ATTN_CHECK(!error, "cannot create the run directory ", paths.dir, " (config key output_dir): ", error.message());
  io::FileLock lock = lock_run_directory(paths);
  // Checked again under the lock: another attn-train may have changed the directory since.
  if (mode == StartMode::resume) {
    check_resumable(paths);
    return {std::move(lock), resumed_vocabularies(config, paths)};
  }
  if (mode == StartMode::restart) {
    const std::string folder = move_run_aside(paths, std::time(nullptr));
    if (!folder.empty()) spdlog::info("--restart: the earlier run's files are now in {}", folder);
  }
  check_fresh(paths);
  return {std::move(lock), new_vocabularies(config, paths)};
}

std::string move_run_aside(const run::RunPaths& paths, std::time_t when) {
  std::vector<fs::path> entries;
  for (const fs::directory_entry& entry : fs::directory_iterator(paths.dir))
    if (!entry.is_directory() && belongs_to_run(entry.path().filename().string())) entries.push_back(entry.path());
  if (entries.empty()) return "";
  const fs::path folder = new_aside_folder(paths, when);
  for (const fs::path& entry : entries) {
    std::error_code error;
    fs::rename(entry, folder / entry.filename(), error);
    ATTN_CHECK(!error, "--restart: cannot move ", entry.string(), " into ", folder.string(), ": ", error.message());
  }
  return folder.string();
}

}  // namespace attn::train
