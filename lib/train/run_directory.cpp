#include "train/run_directory.h"

#include <filesystem>
#include <fstream>
#include <spdlog/spdlog.h>

#include "io/checkpoint.h"
#include "models/model_factory.h"

namespace attn::train {

namespace fs = std::filesystem;

RunPaths run_paths(const std::string& dir, bool joint_vocab) {
  fs::path root(dir);
  RunPaths paths;
  paths.dir = dir;
  paths.config = (root / "config.json").string();
  paths.source_vocab = (root / (joint_vocab ? "spm.model" : "spm.src.model")).string();
  paths.target_vocab = (root / (joint_vocab ? "spm.model" : "spm.tgt.model")).string();
  paths.best_checkpoint = (root / "checkpoint.best.safetensors").string();
  paths.last_checkpoint = (root / "checkpoint.last.safetensors").string();
  paths.log = (root / "train.log.jsonl").string();
  return paths;
}

namespace {

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
  spdlog::info("training a {} {} SentencePiece vocabulary -> {}", config.vocab.size, config.vocab.type, model_path);
  train_vocab(options);
  fs::rename(options.model_prefix + ".vocab", prefix + ".vocab");
  fs::rename(options.model_prefix + ".model", model_path);
}

}  // namespace

Vocabularies prepare_vocabularies(const io::Config& config, const RunPaths& paths) {
  const io::DataConfig& d = config.data;
  if (config.vocab.joint) {
    if (!fs::exists(paths.source_vocab)) train_one(config, {d.train_src, d.train_tgt}, paths.source_vocab);
  } else {
    if (!fs::exists(paths.source_vocab)) train_one(config, {d.train_src}, paths.source_vocab);
    if (!fs::exists(paths.target_vocab)) train_one(config, {d.train_tgt}, paths.target_vocab);
  }
  return Vocabularies{data::Vocab::load(paths.source_vocab), data::Vocab::load(paths.target_vocab)};
}

LoadedRun load_run(const std::string& dir) {
  ATTN_CHECK(fs::is_directory(dir), "model directory ", dir, " does not exist");
  LoadedRun run;
  std::string config_path = (fs::path(dir) / "config.json").string();
  ATTN_CHECK(fs::exists(config_path), dir, " is not a run directory: it has no config.json");
  run.config = io::load_config(config_path);
  run.paths = run_paths(dir, run.config.vocab.joint);
  run.vocab = std::make_unique<Vocabularies>(
      Vocabularies{data::Vocab::load(run.paths.source_vocab), data::Vocab::load(run.paths.target_vocab)});
  run.model = models::make_model(run.config, {run.vocab->source.size(), run.vocab->target.size()});
  run.checkpoint = fs::exists(run.paths.best_checkpoint) ? run.paths.best_checkpoint : run.paths.last_checkpoint;
  ATTN_CHECK(fs::exists(run.checkpoint), dir, " has no checkpoint yet (",
             fs::path(run.paths.best_checkpoint).filename().string(), " or ",
             fs::path(run.paths.last_checkpoint).filename().string(), ")");
  io::load_parameters(io::load_checkpoint(run.checkpoint), run.model->parameters());
  return run;
}

}  // namespace attn::train
