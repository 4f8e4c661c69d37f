#pragma once
// Checkpoint averaging (attn-average): the element-wise mean of the parameters of checkpoints
// of one run, e.g. a run's newest checkpoint.step-STEP.safetensors (train.keep_checkpoints).
// The optimizer state and other extra tensors are left out: the result is for translating.
#include <map>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace attn::run {

struct Averaged {
  std::map<std::string, Tensor> parameters;
  std::map<std::string, std::string> metadata;  // the first checkpoint's
};

// The mean of the checkpoints' parameters, summed in double in the order given (one file in
// memory at a time). Every checkpoint must be of the same run as the first (run::kRunIdKey;
// checkpoints from before run ids only with others without, and a warning), have the same
// parameter names and shapes, and record the same vocabulary; the error names the file that
// differs and how.
Averaged average_parameters(const std::vector<std::string>& checkpoints);

// Averages `checkpoints` into `out` (written atomically), with the first checkpoint's config,
// vocabulary digests and run id as metadata, so that load_run accepts it, and "averaged_from" (the
// files' names, a JSON array). Every checkpoint must record the same vocabulary. Refuses an
// existing `out` unless `overwrite`.
void average_checkpoints(const std::vector<std::string>& checkpoints, const std::string& out, bool overwrite);

// The newest `count` checkpoint.step-STEP.safetensors of run directory `dir`; an error says how
// many there are when there are fewer.
std::vector<std::string> last_step_checkpoints(const std::string& dir, int count);

}  // namespace attn::run
