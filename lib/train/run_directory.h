#pragma once
// What attn-train does with its run directory (config output_dir; the files are listed in
// run/run_files.h).
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

// The checks of `mode` that need nothing written (for --resume: that there is a run to resume),
// so that a run that cannot start fails before any work.
void check_can_start(const run::RunPaths& paths, StartMode mode);

// A run directory ready to train in, held by this process (rank 0 of a data-parallel run).
struct OpenedRun {
  io::FileLock lock;
  run::Vocabularies vocab;
};

// Creates the directory, takes its lock (an error naming the directory and the holder's PID
// if another process has it), checks that `mode` fits what it holds (moving it aside for
// restart), writes config.json and the vocabulary (training it when missing, except on
// resume) and records or checks the vocabulary's SHA-256.
OpenedRun open_run_directory(const io::Config& config, const run::RunPaths& paths, StartMode mode);

// Moves every file of the run (and leftovers of interrupted writes) into a new subfolder
// previous-run-YYYYMMDD-HHMMSS of the directory, named by `when` (local time), with "-2", "-3"
// ... when that exists. Deletes nothing; other files stay. Returns the subfolder's path.
std::string move_run_aside(const run::RunPaths& paths, std::time_t when);

}  // namespace attn::train
