#include "run/load_run.h"

#include <filesystem>

#include "dnnl/onednn_info.h"
#include "io/checkpoint.h"
#include "models/model_factory.h"
#include "ops/gemm.h"

namespace attn::run {

namespace fs = std::filesystem;

LoadedRun load_run(const std::string& dir, const std::string& checkpoint_path, std::optional<Precision> precision) {
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
  run.precision = precision.value_or(io::is_quantized(checkpoint.metadata) ? Precision::int8 : Precision::f32);
  set_decoding_precision(*run.model, run.precision);
  return run;
}

void set_decoding_precision(models::Seq2SeqModel& model, Precision precision) {
  ATTN_CHECK(precision != Precision::bf16 || ops::bf16_gemm_supported(),
             "--precision bf16: oneDNN has no bf16 matmul on this CPU (", dnn::cpu_isa_name(),
             "; it needs AVX-512); use f32 or int8");
  model.parameters().prepare_matmul_weights(precision);
}

}  // namespace attn::run
