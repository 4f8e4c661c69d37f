#pragma once
// What attn-train does with its run directory (config output_dir; the files are listed in
// run/run_files.h).
//
// Rules that keep a run from being damaged silently:
//   - One trainer at a time: attn-train (rank 0 under MPI) holds train.lock while it runs.
//     Readers (load_run) take no lock: every file they read is replaced atomically.
//   - A directory holding a run's files but no checkpoint.last (stopped before its first save,
//     or the file deleted; step checkpoints or an average alone included) is refused, with or
//     without --resume. A vocabulary alone is not a run: a fresh run uses it, as a vocabulary
//     supplied in advance.
//   - --restart moves every file of the old run aside (never deletes them; the vocabulary too,
//     so a new one is trained) and starts over with a new run id. A file that is not a run's
//     (run/run_files.h's list) stops it before anything moves: it would be moved unasked, or
//     left to mix with the new run.
//   - The vocabulary's SHA-256 is recorded (vocab.sha256, and every checkpoint's metadata) and
//     checked by --resume and load_run; runs from before the record load unchecked.
#include <ctime>
#include <string>

#include "io/config.h"
#include "io/file_lock.h"
#include "run/run_files.h"

namespace attn::train {

// How attn-train starts in a run directory.
enum class StartMode {
  fresh,    // the directory must not hold a run
  resume,   // --resume: it must hold one with checkpoint.last
  restart,  // --restart: whatever it holds is moved aside first
};

// The checks of `mode` that need nothing written (for --resume: that there is a run to resume;
// for --restart: that the directory holds no file that is not a run's), so that a run that
// cannot start fails before any work.
void check_can_start(const run::RunPaths& paths, StartMode mode);

// A run directory ready to train in, held by this process (rank 0 of a data-parallel run).
struct OpenedRun {
  io::FileLock lock;
  run::Vocabularies vocab;
  std::string run_id;  // run/run_files.h's kRunIdKey: new, or the resumed run's ("" for an older one)
};

// Creates the directory, takes its lock (an error naming the directory and the holder's PID
// if another process has it), checks that `mode` fits what it holds (moving it aside for
// restart), writes config.json and the vocabulary (training it when missing, except on
// resume) and records or checks the vocabulary's SHA-256.
OpenedRun open_run_directory(const io::Config& config, const run::RunPaths& paths, StartMode mode);

// Moves every file of the run, its vocabulary and the leftovers of interrupted writes into a new
// subfolder previous-run-YYYYMMDD-HHMMSS of the directory, named by `when` (local time), with
// "-2", "-3" ... when that exists. Deletes nothing; train.lock and earlier previous-run-*
// folders stay. Refuses, moving nothing, when the directory holds a file that is not a run's.
// Returns the subfolder's path, or "" when there was nothing to move.
std::string move_run_aside(const run::RunPaths& paths, std::time_t when);

}  // namespace attn::train
