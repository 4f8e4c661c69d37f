// attn-quantize: a trained run as an int8 run: the same config and vocabulary, and its
// checkpoint with every matrix quantised to s8 with per-row scales (about 4x smaller).
// attn-translate, attn-dump-attention and attn-bench decode load it like any run and decode it
// in int8 (or --precision f32, from the dequantised weights); attn-train refuses to train it.
//   attn-quantize --model runs/en-it --out runs/en-it-int8
#include <spdlog/spdlog.h>

#include "app_main.h"
#include "run/quantize.h"
#include "run_defaults.h"

int main(int argc, char** argv) {
  CLI::App app{"attn-quantize: write an int8 copy of a trained run (weights quantised once, about 4x smaller)"};
  std::string model_dir, checkpoint, out;
  bool force = false;
  app.add_option("--model", model_dir, "run directory (default: as attn-translate)");
  app.add_option("--checkpoint", checkpoint, attn::apps::kCheckpointHelp);
  app.add_option("--out", out, "the new run directory to write")->required();
  app.add_flag("--force", force, "replace the run files of --out if it exists");
  return attn::apps::run_app(app, argc, argv, [&] {
    attn::run::QuantizeResult result =
        attn::run::quantize_run(attn::apps::resolve_model_dir(model_dir), out, force, checkpoint);
    spdlog::info("wrote {} ({:.1f} MB, {:.2f}x smaller than the f32 checkpoint's {:.1f} MB)", result.checkpoint,
                 result.written_bytes / 1e6, double(result.source_bytes) / double(result.written_bytes),
                 result.source_bytes / 1e6);
    return 0;
  });
}
