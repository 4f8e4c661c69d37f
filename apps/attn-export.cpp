// attn-export: a trained Transformer run in another toolkit's model format. One format so far:
// CTranslate2 (v4), a directory with model.bin, config.json and the vocabularies, which
// translates as the run does under the settings of docs/guide.md ("Export to CTranslate2").
//   attn-export --format ctranslate2 --model runs/en-it --out en-it-ct2 [--quantization int8]
#include <map>
#include <spdlog/spdlog.h>

#include "app_main.h"
#include "run/export_ctranslate2.h"
#include "run_defaults.h"

int main(int argc, char** argv) {
  using attn::run::Ct2Weights;
  CLI::App app{"attn-export: write a trained Transformer run as a CTranslate2 model directory"};
  std::string format, model_dir, checkpoint, out, quantization = "float32";
  bool force = false;
  app.add_option("--format", format, "the model format to write")->required()->check(CLI::IsMember({"ctranslate2"}));
  app.add_option("--model", model_dir, "run directory (default: as attn-translate)");
  app.add_option("--checkpoint", checkpoint, attn::apps::kCheckpointHelp);
  app.add_option("--out", out, "the model directory to write")->required();
  app.add_option("--quantization", quantization,
                 "weights as float32 (as trained), int8 (CTranslate2's per-row scales), float16 or bfloat16")
      ->check(CLI::IsMember({"float32", "int8", "float16", "bfloat16"}));
  app.add_flag("--force", force, "replace --out if it is not empty");
  return attn::apps::run_app(app, argc, argv, [&] {
    const std::map<std::string, Ct2Weights> weights = {{"float32", Ct2Weights::float32},
                                                       {"int8", Ct2Weights::int8},
                                                       {"float16", Ct2Weights::float16},
                                                       {"bfloat16", Ct2Weights::bfloat16}};
    attn::run::Ct2ExportOptions options;
    options.model_dir = attn::apps::resolve_model_dir(model_dir);
    options.checkpoint = checkpoint;
    options.out_dir = out;
    options.force = force;
    options.weights = weights.at(quantization);
    const attn::run::Ct2ExportResult result = attn::run::export_ctranslate2(options);
    spdlog::info("wrote {} (CTranslate2, {} weights, from {}: {} variables, {} aliases)", out, quantization,
                 result.checkpoint, result.variables, result.aliases);
    return 0;
  });
}
