// attn-average: the mean of the parameters of several checkpoints of one run, as a checkpoint
// that attn-translate, attn-dump-attention and attn-bench decode load with --checkpoint.
//   attn-average --model runs/en-it --last 5 --out runs/en-it/checkpoint.avg5.safetensors
//   attn-average --model runs/en-it --out avg.safetensors a.safetensors b.safetensors
// --last N takes the run's newest N checkpoint.step-STEP.safetensors (train.keep_checkpoints).
// Checkpoints of different runs (their metadata "run_id") are refused, naming two of them.
#include <spdlog/spdlog.h>

#include "app_main.h"
#include "run/average.h"
#include "run_defaults.h"

int main(int argc, char** argv) {
  CLI::App app{"attn-average: average the parameters of checkpoints of one run into a new checkpoint"};
  using attn::apps::at_least;
  std::string model_dir, out;
  std::vector<std::string> files;
  int last = 0;
  bool force = false;
  app.add_option("--model", model_dir, "run directory (default: as attn-translate)");
  auto* last_option =
      app.add_option("--last", last, "average the run's newest N checkpoint.step-STEP.safetensors")->check(at_least(1));
  app.add_option("files", files, "or these checkpoint files")->excludes(last_option);
  app.add_option("--out", out, "the averaged checkpoint to write")->required();
  app.add_flag("--force", force, "replace --out if it exists");
  return attn::apps::run_app(app, argc, argv, [&] {
    ATTN_CHECK(last > 0 || !files.empty(), "name the checkpoints: --last N, or files");
    if (last > 0) files = attn::run::last_step_checkpoints(attn::apps::resolve_model_dir(model_dir), last);
    attn::run::average_checkpoints(files, out, force);
    spdlog::info("averaged {} checkpoints into {}", files.size(), out);
    return 0;
  });
}
