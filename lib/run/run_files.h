#pragma once
// The files of a run directory (config output_dir) that every program reads: their paths, the
// vocabularies, and the vocabulary's SHA-256 record; and the one list of what a run directory
// may hold (run_entry_kind). What attn-train alone does with the directory (its lock, the start
// rules, --restart) is train/run_directory.h's.
//
//   config.json                       the resolved config
//   spm.model, spm.vocab              joint SentencePiece vocabulary (vocab.joint)
//   spm.src.model, spm.tgt.model      separate vocabularies otherwise (and their .vocab)
//   vocab.sha256                      the vocabulary's SHA-256, as sha256sum writes it
//   checkpoint.best.safetensors       best by train.valid_metric
//   checkpoint.last.safetensors       latest, with optimizer and training state (for --resume)
//   checkpoint.step-STEP.safetensors  the newest train.keep_checkpoints saves, parameters only
//   checkpoint.average.safetensors    tools/main-job.sh's average of the step checkpoints
//   *.safetensors                     other checkpoints made from the run (attn-average --out)
//   train.log.jsonl                   one JSON object per log line
//   alignment.json                    the chosen attention extraction (attn-dump-attention --choose-alignment)
//   test.*                            translations and scores of the test set (tools/main-job.sh)
//   *.tmp, *.tmp.model, *.tmp.vocab   leftovers of writes interrupted by a kill
//   train.lock                        locked (flock) by the attn-train using the directory; its PID
//   previous-run-YYYYMMDD-HHMMSS/     an earlier run, moved aside by attn-train --restart
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "data/vocab.h"
#include "io/config.h"

namespace attn::run {

struct RunPaths {
  std::string dir;
  std::string config;
  std::string source_vocab;  // same file as target_vocab when joint
  std::string target_vocab;
  std::string vocab_record;  // vocab.sha256
  std::string best_checkpoint;
  std::string last_checkpoint;
  std::string log;
  std::string lock;
};

RunPaths run_paths(const std::string& dir, bool joint_vocab);

// checkpoint.step-STEP.safetensors in `dir`.
std::string step_checkpoint_path(const std::string& dir, int64_t step);

// The checkpoint.step-STEP.safetensors files of `dir`, oldest step first.
std::vector<std::string> step_checkpoints(const std::string& dir);

// What an entry of a run directory is, by its name (the list above).
enum class RunEntry {
  run_file,     // written by a run or made from it: it makes the directory hold a run
  vocabulary,   // spm.*: alone, a vocabulary supplied in advance
  leftover,     // *.tmp...: an interrupted write, of no use
  lock,         // train.lock
  earlier_run,  // previous-run-*/
  unknown,      // none of the above: not attn's to move
};

RunEntry run_entry_kind(const std::string& name, bool is_directory);

// The names of the entries of `dir` of kind `kind`, in a fixed order for messages (config.json,
// vocab.sha256, train.log.jsonl, the checkpoints ...; then by name); none when `dir` does not
// exist.
std::vector<std::string> run_entries(const std::string& dir, RunEntry kind);

// The checkpoint metadata key that holds the identity of the run that wrote the checkpoint: 32
// hex digits (128 random bits) drawn when a run starts (fresh or --restart) and kept by --resume.
// attn-average refuses to mix checkpoints of different runs.
inline constexpr const char* kRunIdKey = "run_id";

// A new run id.
std::string new_run_id();

// The run id in `checkpoint`'s metadata, or "" for a checkpoint saved before run ids existed;
// an error naming the checkpoint when it is not 32 hex digits.
std::string run_id_of(const std::string& checkpoint, const std::map<std::string, std::string>& metadata);

// Vocabulary file name (in the run directory, e.g. "spm.model") -> its SHA-256 in hex.
using VocabDigests = std::map<std::string, std::string>;

// The checkpoint metadata key that holds a VocabDigests as a JSON object.
inline constexpr const char* kVocabDigestsKey = "vocab_sha256";

struct Vocabularies {
  data::Vocab source;
  data::Vocab target;
  VocabDigests digests;  // of the files they were loaded from
};

// The run's vocabularies and the digests of their files.
Vocabularies load_vocabularies(const RunPaths& paths);

// For checkpoint metadata (kVocabDigestsKey).
std::string digests_to_json(const VocabDigests& digests);

// vocab.sha256: written (atomically) when the vocabulary is made; read back, or nullopt for a
// run from before the record existed.
void write_vocab_record(const RunPaths& paths, const VocabDigests& digests);
std::optional<VocabDigests> read_vocab_record(const RunPaths& paths);

// Throws naming the file when `actual` differs from the record (a vocabulary replaced).
void check_vocab_record(const RunPaths& paths, const VocabDigests& recorded, const VocabDigests& actual);

// Throws naming the checkpoint when its metadata records other vocabulary digests than
// `digests` (a vocabulary replaced since it was saved); a checkpoint without a record passes.
void check_checkpoint_vocabulary(const std::string& checkpoint, const std::map<std::string, std::string>& metadata,
                                 const VocabDigests& digests);

// Throws naming the checkpoint when the config it records (metadata "config") sets a Transformer
// choice that changes what the parameters mean without changing their names or shapes to
// another value than `config` does: model.transformer.positions (sinusoidal, rotary and alibi
// models have the same parameters) and model.transformer.activation. A checkpoint without a
// record, or of another family, passes.
void check_checkpoint_model(const std::string& checkpoint, const std::map<std::string, std::string>& metadata,
                            const io::Config& config);

}  // namespace attn::run
