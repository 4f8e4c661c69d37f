#include "run/load_run.h"

#include <filesystem>
#include <spdlog/spdlog.h>

#include "core/buffer_pool.h"
#include "dnnl/onednn_info.h"
#include "io/checkpoint.h"
#include "models/model_factory.h"
#include "ops/gemm.h"
#include "ops/linear.h"
#include "ops/precision.h"

namespace attn::run {

namespace fs = std::filesystem;

namespace {

// Checks run.checkpoint against the run's vocabulary and config and makes its tensors the
// model's parameters (io::adopt_parameters); whether it holds int8 weights. The model's
// initial values are freed first, so that the process never holds the model twice.
bool adopt_checked_checkpoint(LoadedRun& run) {
  run.model->parameters().release_values();
  io::Checkpoint checkpoint = io::load_checkpoint(run.checkpoint);
  check_checkpoint_vocabulary(checkpoint.path, checkpoint.metadata, run.vocab->digests);
  check_checkpoint_model(checkpoint.path, checkpoint.metadata, run.config);
  io::adopt_parameters(checkpoint, run.model->parameters());
  return io::is_quantized(checkpoint.metadata);
}

}  // namespace

LoadedRun read_run(const std::string& dir, const std::string& checkpoint_path) {
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
  run.quantized = adopt_checked_checkpoint(run);
  // What the checkpoint held beside the parameters (an optimizer's moments) goes back to the
  // system before the decoding forms are made.
  BufferPool::instance().trim();
  return run;
}

LoadedRun load_run(const std::string& dir, const std::string& checkpoint_path, std::optional<Precision> precision) {
  LoadedRun run = read_run(dir, checkpoint_path);
  run.precision =
      set_decoding_precision(*run.model, precision.value_or(run.quantized ? Precision::int8 : Precision::f32));
  return run;
}

Precision set_decoding_precision(models::Seq2SeqModel& model, Precision requested) {
  const ops::PrecisionChoice choice = ops::resolve_precision(requested, "--precision");
  if (requested == Precision::automatic) spdlog::info("precision: {}", choice.reason);
  model.parameters().prepare_for_decoding(choice.precision, ops::pack_weight);
  return choice.precision;
}

namespace {

// The digest of one of a run's vocabulary files, keyed by its name as load_vocabularies does.
const std::string& digest_of(const std::string& path, const VocabDigests& digests) {
  const std::string name = fs::path(path).filename().string();
  auto found = digests.find(name);
  ATTN_CHECK(found != digests.end(), "no SHA-256 of ", path, " among the run's vocabulary digests");
  return found->second;
}

}  // namespace

void check_same_vocabularies(const RunPaths& first, const VocabDigests& first_digests, const RunPaths& member,
                             const VocabDigests& member_digests) {
  for (const bool target : {true, false}) {
    const std::string& first_file = target ? first.target_vocab : first.source_vocab;
    const std::string& member_file = target ? member.target_vocab : member.source_vocab;
    const std::string& expected = digest_of(first_file, first_digests);
    const std::string& actual = digest_of(member_file, member_digests);
    ATTN_CHECK(actual == expected, "--model ", member.dir, " and --model ", first.dir, " have different ",
               target ? "target" : "source", " vocabularies (", member_file, " sha256 ", actual.substr(0, 12), ", ",
               first_file, " sha256 ", expected.substr(0, 12), "): an ensemble's models must share ",
               target ? "the target vocabulary, whose token ids their log-probabilities are averaged over"
                      : "the source vocabulary, with which the input is encoded once",
               "; train them with the same vocabulary files");
  }
}

const models::Seq2SeqModel& LoadedEnsemble::model() const {
  if (ensemble) return *ensemble;
  return *first().model;
}

LoadedEnsemble load_ensemble(const std::vector<std::string>& dirs, const std::vector<std::string>& checkpoints,
                             const std::vector<float>& weights, std::optional<Precision> precision) {
  ATTN_CHECK(!dirs.empty(), "no --model to load");
  const auto per_model = [&](size_t count, const char* flag) {
    ATTN_CHECK(count == 0 || count == dirs.size(), flag, " has ", count, count == 1 ? " value" : " values", " for ",
               dirs.size(), " --model: give none, or one per --model in the same order");
  };
  per_model(checkpoints.size(), "--checkpoint");
  per_model(weights.size(), "--weights");
  LoadedEnsemble loaded;
  for (size_t i = 0; i < dirs.size(); ++i) {
    loaded.runs.push_back(load_run(dirs[i], checkpoints.empty() ? "" : checkpoints[i], precision));
    const LoadedRun& run = loaded.runs.back();
    check_same_vocabularies(loaded.first().paths, loaded.first().vocab->digests, run.paths, run.vocab->digests);
  }
  if (dirs.size() > 1) {
    std::vector<const models::Seq2SeqModel*> members;
    for (const LoadedRun& run : loaded.runs) members.push_back(run.model.get());
    loaded.ensemble = std::make_unique<models::EnsembleModel>(std::move(members), weights);
  }
  return loaded;
}

}  // namespace attn::run
