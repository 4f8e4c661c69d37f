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

std::string name_of(const std::string& path) { return fs::path(path).filename().string(); }

std::string join(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ", ") + item;
  return joined;
}

// The files of a run present in `dir` (run/run_files.h): any of them makes it hold a run.
std::vector<std::string> run_files(const std::string& dir) { return run::run_entries(dir, run::RunEntry::run_file); }

// What --restart moves: the run's files, its vocabulary and the leftovers of interrupted writes.
std::vector<std::string> files_to_move_aside(const std::string& dir) {
  std::vector<std::string> names = run_files(dir);
  for (run::RunEntry kind : {run::RunEntry::vocabulary, run::RunEntry::leftover}) {
    std::vector<std::string> more = run::run_entries(dir, kind);
    names.insert(names.end(), more.begin(), more.end());
  }
  return names;
}

[[noreturn]] void refuse_unfinished_run(const run::RunPaths& paths, const std::string& prefix) {
  std::vector<std::string> files = run_files(paths.dir), vocab = run::run_entries(paths.dir, run::RunEntry::vocabulary);
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
  ATTN_CHECK(!run_files(paths.dir).empty(), "--resume: there is no run to resume in ", paths.dir, " (no ",
             name_of(paths.last_checkpoint), ")");
  refuse_unfinished_run(paths, "--resume: ");
}

// Never overwrite a run by accident: an existing run continues only when asked to.
void check_fresh(const run::RunPaths& paths) {
  if (run_files(paths.dir).empty()) return;
  refuse_quantized_run(paths, "");
  ATTN_CHECK(!fs::exists(paths.last_checkpoint), "the run directory ", paths.dir,
             " already holds a run. Continue it with --resume, start it over with --restart (which moves its files "
             "into a dated subfolder), or set another output_dir");
  refuse_unfinished_run(paths, "");
}

// --restart moves a run's own files and nothing else. A file it does not know may be the user's
// (not to be moved unasked) or the earlier run's (not to be left beside the new one): it stops.
void refuse_unknown_files(const run::RunPaths& paths) {
  const std::vector<std::string> unknown = run::run_entries(paths.dir, run::RunEntry::unknown);
  const bool one = unknown.size() == 1;
  ATTN_CHECK(unknown.empty(), "--restart: the run directory ", paths.dir, " holds ", join(unknown),
             one ? ", which is not a file of a run" : ", which are not files of a run",
             ": --restart moves only a run's own files aside, so that nothing else is moved unasked or mixed with the "
             "new run. Move ",
             one ? "it" : "them", " out of ", paths.dir, ", then --restart again");
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
  if (mode == StartMode::fresh) return;
  if (mode == StartMode::restart) {
    if (!fs::is_directory(paths.dir)) return;
    if (io::lock_is_held(paths.lock)) refuse_in_use(paths);
    refuse_unknown_files(paths);
    return;
  }
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
    // The run keeps its id; one from before run ids stays without, so that its step
    // checkpoints still average together.
    std::string run_id = run::run_id_of(paths.last_checkpoint, io::read_safetensors_metadata(paths.last_checkpoint));
    run::Vocabularies vocab = resumed_vocabularies(config, paths);
    return {std::move(lock), std::move(vocab), std::move(run_id)};
  }
  if (mode == StartMode::restart) {
    const std::string folder = move_run_aside(paths, std::time(nullptr));
    if (!folder.empty()) spdlog::info("--restart: the earlier run's files are now in {}", folder);
  }
  check_fresh(paths);
  run::Vocabularies vocab = new_vocabularies(config, paths);
  return {std::move(lock), std::move(vocab), run::new_run_id()};
}

std::string move_run_aside(const run::RunPaths& paths, std::time_t when) {
  refuse_unknown_files(paths);
  const std::vector<std::string> names = files_to_move_aside(paths.dir);
  if (names.empty()) return "";
  const fs::path folder = new_aside_folder(paths, when);
  for (const std::string& name : names) {
    const fs::path entry = fs::path(paths.dir) / name;
    std::error_code error;
    fs::rename(entry, folder / name, error);
    ATTN_CHECK(!error, "--restart: cannot move ", entry.string(), " into ", folder.string(), ": ", error.message());
  }
  return folder.string();
}

}  // namespace attn::train
