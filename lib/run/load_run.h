#pragma once
// load_run: a trained run, ready to translate, for every program that uses one (attn-translate,
// attn-dump-attention, attn-bench decode). It lives outside train/ so that inference does not
// depend on the trainer.
#include <memory>
#include <optional>
#include <string>

#include "core/matmul_weight.h"
#include "io/config.h"
#include "models/seq2seq_model.h"
#include "run/run_files.h"

namespace attn::run {

// A run's config, vocabularies and model with the parameters of `checkpoint` when given (any
// checkpoint of the run's model, e.g. attn-average's), else of the best (or, failing that, the
// last) checkpoint.
struct LoadedRun {
  io::Config config;
  RunPaths paths;
  std::unique_ptr<Vocabularies> vocab;
  std::unique_ptr<models::Seq2SeqModel> model;
  std::string checkpoint;                // the file the parameters came from
  Precision precision = Precision::f32;  // of the model's matmuls
};

// Reads without writing or locking (every run file is replaced atomically); checks the
// vocabulary against its record and the checkpoint's, and the checkpoint's data checksum.
// The model's matmul weights are then prepared once for `precision` (--precision); without
// one, int8 for a quantised checkpoint (attn-quantize) and f32 otherwise. bf16 on a CPU where
// oneDNN has no bf16 matmul is an error saying so.
LoadedRun load_run(const std::string& dir, const std::string& checkpoint = "",
                   std::optional<Precision> precision = std::nullopt);

// What load_run does last, for a model that comes from elsewhere (attn-bench decode --config):
// the bf16 check, then the store's matmul weights prepared for `precision`.
void set_decoding_precision(models::Seq2SeqModel& model, Precision precision);

}  // namespace attn::run
