#pragma once
// The training and validation files a config names, checked before attn-train writes anything,
// so that a bad input never leaves a half-made run directory behind.
#include <cstdint>
#include <memory>

#include "data/training_stream.h"
#include "io/config.h"
#include "run/run_files.h"

namespace attn::train {

// Training corpora up to this many bytes (both files together) have their lines counted up
// front; larger ones are checked while they stream (data/training_stream.h), so that the time
// to the first step does not grow with the corpus.
constexpr int64_t kCountLinesUpToBytes = int64_t(256) << 20;

// Throws attn::Error naming the config key and the path of the first file that is unset,
// missing, a directory, unreadable, or without text (empty or only blank lines: for a large
// training file, its first MiB), or naming both files and their line counts when the two sides
// of a pair differ in length (training corpora only up to count_lines_up_to bytes).
void check_input_files(const io::Config& config, int64_t count_lines_up_to = kCountLinesUpToBytes);

// The stream of training batches over the config's corpora (data.*; batching, segmentation
// sampling and joined pairs as train.* and vocab.* set them; the alignments only when guided
// alignment is on), encoded with `vocab`: attn-train's, and attn-bench grad's first batch.
std::unique_ptr<data::TrainingStream> make_training_stream(const io::Config& config, const run::Vocabularies& vocab);

}  // namespace attn::train
