#include "run/load_run.h"

#include <filesystem>

#include "io/checkpoint.h"
#include "models/model_factory.h"

namespace attn::run {

namespace fs = std::filesystem;

LoadedRun load_run(const std::string& dir, const std::string& checkpoint_path) {
  ATTN_CHECK(fs::exists(dir), "model directory ", dir, " does not exist");
  ATTN_CHECK(fs::is_directory(dir), dir,
             " is not a directory: a model is the run directory attn-train writes (its config's output_dir), not a "
             "file in it");
  LoadedRun run;
  std::string config_path = (fs::path(dir) / "config.json").string();
  ATTN_CHECK(fs::exists(config_path), dir, " is not a run directory: it has no config.json");
  run.config = io::load_config(config_path);
  run.paths = run_paths(dir, run.config.vocab.joint);
  run.vocab = std::make_unique<Vocabularies>(load_vocabularies(run.paths));
  if (std::optional<VocabDigests> record = read_vocab_record(run.paths))
    check_vocab_record(run.paths, *record, run.vocab->digests);
  run.model = models::make_model(run.config, {run.vocab->source.size(), run.vocab->target.size()});
  if (!checkpoint_path.empty()) {
    ATTN_CHECK(fs::is_regular_file(checkpoint_path), "--checkpoint ", checkpoint_path, " does not exist");
    run.checkpoint = checkpoint_path;
  } else {
    run.checkpoint = fs::exists(run.paths.best_checkpoint) ? run.paths.best_checkpoint : run.paths.last_checkpoint;
    ATTN_CHECK(fs::exists(run.checkpoint), dir, " has no checkpoint yet (",
               fs::path(run.paths.best_checkpoint).filename().string(), " or ",
               fs::path(run.paths.last_checkpoint).filename().string(), ")");
  }
  io::Checkpoint checkpoint = io::load_checkpoint(run.checkpoint);
  check_checkpoint_vocabulary(checkpoint.path, checkpoint.metadata, run.vocab->digests);
  io::load_parameters(checkpoint, run.model->parameters());
  return run;
}

}  // namespace attn::run
