#pragma once
// The run directory (config output_dir): everything needed to translate and to resume.
//
//   config.json                       the resolved config
//   spm.model, spm.vocab              joint SentencePiece vocabulary (vocab.joint)
//   spm.src.model, spm.tgt.model      separate vocabularies otherwise (and their .vocab)
//   vocab.sha256                      the vocabulary's SHA-256, as sha256sum writes it
//   checkpoint.best.safetensors       best by train.valid_metric
//   checkpoint.last.safetensors       latest, with optimizer and training state (for --resume)
//   train.log.jsonl                   one JSON object per log line
//   train.lock                        locked (flock) by the attn-train using the directory; its PID
//   previous-run-YYYYMMDD-HHMMSS/     an earlier run, moved aside by attn-train --restart
//
// Rules that keep a run from being damaged silently:
//   - One trainer at a time: attn-train (rank 0 under MPI) holds train.lock while it runs.
//     Readers (load_run) take no lock: every file they read is replaced atomically.
//   - A directory holding a run's files but no checkpoint.last (stopped before its first save,
//     or the file deleted) is refused, with or without --resume; --restart moves the old files
//     aside (never deletes them) and starts over. A vocabulary alone is not a run: a fresh run
//     uses it, as a vocabulary supplied in advance.
//   - The vocabulary's SHA-256 is recorded (vocab.sha256, and every checkpoint's metadata) and
//     checked by --resume and load_run; runs from before the record load unchecked.
#include <ctime>
#include <map>
#include <memory>
#include <string>

#include "data/vocab.h"
#include "io/checkpoint.h"
#include "io/config.h"
#include "io/file_lock.h"
#include "models/seq2seq_model.h"

namespace attn::train {

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

// Vocabulary file name (in the run directory, e.g. "spm.model") -> its SHA-256 in hex.
using VocabDigests = std::map<std::string, std::string>;

// The checkpoint metadata key that holds a VocabDigests as a JSON object.
inline constexpr const char* kVocabDigestsKey = "vocab_sha256";

struct Vocabularies {
  data::Vocab source;
  data::Vocab target;
  VocabDigests digests;  // of the files they were loaded from
};

// How attn-train starts in a run directory.
enum class StartMode {
  fresh,    // the directory must not hold a run
  resume,   // --resume: it must hold one with checkpoint.last
  restart,  // --restart: whatever it holds is moved aside first
};

// The checks of `mode` that need nothing written (for --resume: that there is a run to resume),
// so that a run that cannot start fails before any work.
void check_can_start(const RunPaths& paths, StartMode mode);

// A run directory ready to train in, held by this process (rank 0 of a data-parallel run).
struct OpenedRun {
  io::FileLock lock;
  Vocabularies vocab;
};

// Creates the directory, takes its lock (an error naming the directory and the holder's PID
// if another process has it), checks that `mode` fits what it holds (moving it aside for
// restart), writes config.json and the vocabulary (training it when missing, except on
// resume) and records or checks the vocabulary's SHA-256.
OpenedRun open_run_directory(const io::Config& config, const RunPaths& paths, StartMode mode);

// The vocabularies rank 0 prepared, for the other ranks.
Vocabularies load_vocabularies(const RunPaths& paths);

// For checkpoint metadata (kVocabDigestsKey).
std::string digests_to_json(const VocabDigests& digests);

// Moves every file of the run (and leftovers of interrupted writes) into a new subfolder
// previous-run-YYYYMMDD-HHMMSS of the directory, named by `when` (local time), with "-2", "-3"
// ... when that exists. Deletes nothing; other files stay. Returns the subfolder's path.
std::string move_run_aside(const RunPaths& paths, std::time_t when);

// A trained run, ready to translate: its config, vocabularies and model with the best (or,
// failing that, the last) checkpoint's parameters.
struct LoadedRun {
  io::Config config;
  RunPaths paths;
  std::unique_ptr<Vocabularies> vocab;
  std::unique_ptr<models::Seq2SeqModel> model;
  std::string checkpoint;  // the file the parameters came from
};

// Reads without writing or locking; checks the vocabulary against its record and the
// checkpoint's, and the checkpoint's data checksum.
LoadedRun load_run(const std::string& dir);

}  // namespace attn::train
