#include "run/load_run.h"

#include <filesystem>
#include <functional>
#include <map>
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

// The run in `dir` with its model built and its checkpoint chosen and checked against the run's
// vocabulary and config, from the checkpoint's header alone; its parameters not yet read.
LoadedRun open_run(const std::string& dir, const std::string& checkpoint_path) {
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
  run.model = models::make_model_to_load(run.config, {run.vocab->source.size(), run.vocab->target.size()});
  if (!checkpoint_path.empty()) {
    ATTN_CHECK(fs::is_regular_file(checkpoint_path), "--checkpoint ", checkpoint_path, " does not exist");
    run.checkpoint = checkpoint_path;
  } else {
    run.checkpoint = fs::exists(run.paths.best_checkpoint) ? run.paths.best_checkpoint : run.paths.last_checkpoint;
    ATTN_CHECK(fs::exists(run.checkpoint), dir, " has no checkpoint yet (",
               fs::path(run.paths.best_checkpoint).filename().string(), " or ",
               fs::path(run.paths.last_checkpoint).filename().string(), ")");
  }
  const std::map<std::string, std::string> metadata = io::read_checkpoint_metadata(run.checkpoint);
  check_checkpoint_vocabulary(run.checkpoint, metadata, run.vocab->digests);
  check_checkpoint_model(run.checkpoint, metadata, run.config);
  run.quantized = io::is_quantized(metadata);
  return run;
}

// Makes the checkpoint's tensors the model's parameters, one at a time (io::adopt_parameters),
// each handed to `adopted` as it arrives.
void adopt_checkpoint(LoadedRun& run, const std::function<void(const std::string&)>& adopted = {}) {
  io::adopt_parameters(run.checkpoint, run.model->parameters(), adopted);
  BufferPool::instance().trim();
}

// `requested` resolved (ops::resolve_precision), saying why when it was measured.
Precision resolved_precision(Precision requested) {
  const ops::PrecisionChoice choice = ops::resolve_precision(requested, "--precision");
  if (requested == Precision::automatic) spdlog::info("precision: {}", choice.reason);
  return choice.precision;
}

}  // namespace

LoadedRun read_run(const std::string& dir, const std::string& checkpoint_path) {
  LoadedRun run = open_run(dir, checkpoint_path);
  adopt_checkpoint(run);
  return run;
}

LoadedRun load_run(const std::string& dir, const std::string& checkpoint_path, std::optional<Precision> precision) {
  LoadedRun run = open_run(dir, checkpoint_path);
  run.precision = resolved_precision(precision.value_or(run.quantized ? Precision::int8 : Precision::f32));
  // Each weight is packed as it is read, so that the checkpoint is never held whole beside the
  // packed copies.
  ParameterStore& store = run.model->parameters();
  adopt_checkpoint(run,
                   [&](const std::string& name) { store.prepare_for_decoding(name, run.precision, ops::pack_weight); });
  store.prepare_for_decoding(run.precision, ops::pack_weight);
  return run;
}

Precision set_decoding_precision(models::Seq2SeqModel& model, Precision requested) {
  const Precision precision = resolved_precision(requested);
  model.parameters().prepare_for_decoding(precision, ops::pack_weight);
  return precision;
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
