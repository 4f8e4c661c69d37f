#pragma once
// The flags of a program that decodes with one trained run or an ensemble of several
// (attn-translate, attn-serve): --model (repeatable), --checkpoint (none, or one per --model),
// --weights (one per --model).
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "app_main.h"
#include "run_defaults.h"

namespace attn::apps {

struct EnsembleFlags {
  std::vector<std::string> model_dirs, checkpoints;  // --checkpoint: none, or one per --model
  std::vector<float> weights;

  // The --model directories in order, or the default run when none was given.
  std::vector<std::string> resolved_model_dirs() const {
    return model_dirs.empty() ? std::vector<std::string>{resolve_model_dir("")} : model_dirs;
  }
};

inline void add_ensemble_flags(CLI::App& app, EnsembleFlags& flags) {
  app.add_option("--model", flags.model_dirs,
                 "run directory (default: $ATTN_MODEL, else configs/en-it.json's output_dir, else runs/en-it); "
                 "repeat it to decode with an ensemble, which averages the models' log-probabilities");
  app.add_option("--checkpoint", flags.checkpoints,
                 std::string(kCheckpointHelp) +
                     "; with several --model, none or one per --model in the same order ('' = that run's default)");
  app.add_option("--weights", flags.weights,
                 "with several --model: one weight per model for the average of their log-probabilities "
                 "(default: equal)")
      ->check(number_check([](double value) { return value > 0; }, "above 0", ">0"));
}

}  // namespace attn::apps
