#pragma once
// load_run: a trained run, ready to translate, for every program that uses one (attn-translate,
// attn-dump-attention, attn-serve, attn-bench decode), and read_run, its parameters as trained
// (attn-export, attn-quantize). It lives outside train/ so that inference does not depend on
// the trainer.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/matmul_weight.h"
#include "io/config.h"
#include "models/ensemble.h"
#include "models/seq2seq_model.h"
#include "run/run_files.h"

namespace attn::run {

// A run's config, vocabularies and model with the parameters of a checkpoint (any checkpoint
// of the run's model, e.g. attn-average's).
struct LoadedRun {
  io::Config config;
  RunPaths paths;
  std::unique_ptr<Vocabularies> vocab;
  std::unique_ptr<models::Seq2SeqModel> model;
  std::string checkpoint;                // the file the parameters came from
  bool quantized = false;                // the checkpoint holds int8 weights (attn-quantize)
  Precision precision = Precision::f32;  // of the model's matmuls
};

// The run in `dir` with the f32 parameters of `checkpoint` when given, else of the best (or,
// failing that, the last) checkpoint, for a program that reads the parameters themselves
// (attn-export, attn-quantize); an int8 checkpoint's are dequantised. Reads without writing or
// locking (every run file is replaced atomically); checks the vocabulary against its record and
// the checkpoint's, and the checkpoint's data checksum.
LoadedRun read_run(const std::string& dir, const std::string& checkpoint = "");

// read_run, ready to translate (attn-translate, attn-dump-attention, attn-serve, attn-bench
// decode): each matmul weight is prepared for `precision` (--precision; auto is measured here,
// at OpenMP's thread count then) and packed as soon as it is read, and its plain forms dropped
// (ParameterStore::prepare_for_decoding), so that the checkpoint is never held whole beside the
// packed copies; without a precision, int8 for a quantised checkpoint and f32 otherwise. bf16
// on a CPU where oneDNN has no bf16 matmul is an error saying so.
LoadedRun load_run(const std::string& dir, const std::string& checkpoint = "",
                   std::optional<Precision> precision = std::nullopt);

// What load_run does last, for a model that comes from elsewhere (attn-bench decode --config):
// `requested` resolved (ops::resolve_precision), then the store's matmul weights prepared for
// it, packed (ops::pack_matmul_weights) and their plain forms dropped
// (ParameterStore::prepare_for_decoding): the model can decode, not train or be saved. Returns the
// precision resolved: never automatic.
Precision set_decoding_precision(models::Seq2SeqModel& model, Precision requested);

// Runs decoded as one ensemble (models/ensemble.h) must share the target vocabulary (their
// log-probabilities are averaged token id by token id) and the source vocabulary (the input is
// encoded once): throws one line naming both run directories (as --model) when the SHA-256 of
// `member`'s source or target vocabulary file differs from `first`'s.
void check_same_vocabularies(const RunPaths& first, const VocabDigests& first_digests, const RunPaths& member,
                             const VocabDigests& member_digests);

// Runs decoded as one ensemble (attn-translate --model A --model B; models/ensemble.h), or a
// single run. The decoding settings and vocabularies are the first run's; the vocabularies of
// the others must be the same files (check_same_vocabularies).
struct LoadedEnsemble {
  std::vector<LoadedRun> runs;                      // in --model order
  std::unique_ptr<models::EnsembleModel> ensemble;  // of runs' models, when there are two or more

  const LoadedRun& first() const { return runs.front(); }
  // The model to decode with: the one run's, or the ensemble.
  const models::Seq2SeqModel& model() const;
};

// Loads `dirs` in order (each as load_run) and checks each run's vocabularies against the
// first's before loading the next. `checkpoints`: empty (every run's default) or one per dir
// in the same order, "" keeping that run's default. `weights`: empty (equal) or one per dir.
// `precision` applies to every run, as in load_run.
LoadedEnsemble load_ensemble(const std::vector<std::string>& dirs, const std::vector<std::string>& checkpoints = {},
                             const std::vector<float>& weights = {}, std::optional<Precision> precision = std::nullopt);

}  // namespace attn::run
