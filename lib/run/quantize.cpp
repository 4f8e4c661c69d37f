#include "run/quantize.h"

#include <filesystem>

#include "io/atomic_file.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "run/load_run.h"

namespace attn::run {

namespace fs = std::filesystem;

namespace {

// The new directory, checked before anything is read or written.
void prepare_out_dir(const std::string& model_dir, const std::string& out_dir, bool force) {
  std::error_code error;
  if (fs::exists(out_dir)) {
    ATTN_CHECK(fs::is_directory(out_dir), "--out ", out_dir, " exists and is not a directory");
    ATTN_CHECK(!fs::equivalent(out_dir, model_dir, error), "--out ", out_dir,
               " is the run being quantised; name a new directory");
    ATTN_CHECK(force || fs::is_empty(out_dir), "--out ", out_dir,
               " already exists; add --force to replace the run files in it");
  }
  fs::create_directories(out_dir, error);
  ATTN_CHECK(!error, "--out: cannot create ", out_dir, ": ", error.message());
}

// A vocabulary file and its SentencePiece .vocab sibling, when there is one.
void copy_vocabulary(const std::string& model_path, const std::string& out_dir) {
  for (const fs::path& file : {fs::path(model_path), fs::path(model_path).replace_extension(".vocab")}) {
    if (!fs::exists(file)) continue;
    std::error_code error;
    fs::copy_file(file, fs::path(out_dir) / file.filename(), fs::copy_options::overwrite_existing, error);
    ATTN_CHECK(!error, "cannot copy ", file.string(), " into ", out_dir, ": ", error.message());
  }
}

// What the int8 checkpoint keeps of the source's metadata: what load_run checks and a reader
// may want (the reserved keys are the writer's own).
io::CheckpointExtras kept_metadata(const std::string& checkpoint) {
  io::CheckpointExtras extras;
  std::map<std::string, std::string> metadata = io::read_safetensors_metadata(checkpoint);
  for (const char* key : {kVocabDigestsKey, kRunIdKey, "config", "train_state"})
    if (metadata.count(key)) extras.metadata[key] = metadata.at(key);
  extras.metadata["quantized_from"] = fs::path(checkpoint).filename().string();
  return extras;
}

}  // namespace

QuantizeResult quantize_run(const std::string& model_dir, const std::string& out_dir, bool force,
                            const std::string& checkpoint) {
  LoadedRun run = read_run(model_dir, checkpoint);
  ATTN_CHECK(!io::is_quantized(io::read_safetensors_metadata(run.checkpoint)), run.checkpoint,
             " is already quantised (int8)");
  prepare_out_dir(model_dir, out_dir, force);

  RunPaths out = run_paths(out_dir, run.config.vocab.joint);
  copy_vocabulary(run.paths.source_vocab, out_dir);
  if (run.paths.target_vocab != run.paths.source_vocab) copy_vocabulary(run.paths.target_vocab, out_dir);
  if (fs::exists(run.paths.vocab_record)) write_vocab_record(out, run.vocab->digests);
  io::Config config = run.config;
  config.output_dir = out_dir;
  io::write_file_atomically(out.config, io::config_to_string(config) + "\n");
  // A stale checkpoint.last of an earlier run in out_dir (--force) would be trained or loaded.
  fs::remove(out.last_checkpoint);

  io::save_quantized_checkpoint(out.best_checkpoint, run.model->parameters(), kept_metadata(run.checkpoint));
  return {out.best_checkpoint, fs::file_size(run.checkpoint), fs::file_size(out.best_checkpoint)};
}

}  // namespace attn::run
