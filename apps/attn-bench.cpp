// attn-bench: measures training and decoding speed on this machine.
//   attn-bench train --config configs/bench/transformer-small.json --batch-sentences 64
//       --src-len 24 --tgt-len 24 --steps 10 [--json]
//   attn-bench decode --model runs/en-it --input data/tatoeba_en_it/test.en --beam 5 --batch-size 32
//       [--batch-tokens 2048] [--json]
//   attn-bench decode --config configs/bench/transformer-small.json --beam 5 --sentences 500 --batch-size 32
//   attn-bench grad --config configs/bench/transformer-small.json --set model.transformer.d_model=16 ...
//       --output step.safetensors   (one training step's tensors, for tools/check-gradients.py)
#include <fstream>
#include <iostream>
#include <optional>

#include "app_main.h"
#include "bench/decode_benchmark.h"
#include "bench/grad_dump.h"
#include "bench/train_benchmark.h"
#include "core/parallel.h"
#include "data/corpus.h"
#include "io/config.h"
#include "models/model_factory.h"
#include "ops/precision.h"
#include "run/load_run.h"
#include "run_defaults.h"

namespace {

struct DecodeFlags {
  std::string model_dir, checkpoint, config_path, input, precision;
  int beam = 5, batch_size = 32, threads = 0;
  int64_t batch_tokens = -1;  // -1: the run's decode.batch_tokens
  int window_batches = attn::decode::TranslateOptions{}.window_batches;
  std::optional<bool> parallel_batches;  // unset: the run's decode.parallel_batches
  int64_t sentences = 0, source_length = 12;
};

void set_compute(const attn::io::Config& config, int threads) {
  attn::set_parallel_threads(threads > 0 ? threads : config.train.threads);
}

attn::decode::TranslateOptions translate_options(const attn::io::Config& config, const DecodeFlags& flags) {
  attn::decode::TranslateOptions options = attn::decode::translate_options(config);
  options.search.beam = flags.beam;
  options.batch_size = flags.batch_size;
  if (flags.batch_tokens >= 0) options.batch_tokens = flags.batch_tokens;
  options.window_batches = flags.window_batches;
  if (flags.parallel_batches) options.parallel_batches = *flags.parallel_batches;
  return options;
}

attn::bench::DecodeBenchmarkResult run_decode(const DecodeFlags& flags) {
  if (flags.config_path.empty()) {
    attn::run::LoadedRun run = attn::run::load_run(attn::apps::resolve_model_dir(flags.model_dir), flags.checkpoint,
                                                   attn::apps::precision_flag(flags.precision));
    set_compute(run.config, flags.threads);
    auto options = translate_options(run.config, flags);
    attn::bench::DecodeBenchmarkResult result;
    if (flags.input.empty()) {
      result = attn::bench::run_random_decode_benchmark(*run.model, flags.sentences > 0 ? flags.sentences : 500,
                                                        flags.source_length, options, 1);
    } else {
      std::vector<std::string> lines = attn::data::read_lines(flags.input);
      if (flags.sentences > 0 && int64_t(lines.size()) > flags.sentences) lines.resize(flags.sentences);
      attn::decode::Translator translator(*run.model, run.vocab->source, run.vocab->target, options);
      result = attn::bench::run_decode_benchmark(translator, lines, options);
    }
    result.precision = attn::choice_name(run.precision);
    return result;
  }
  attn::io::Config config = attn::io::load_config(flags.config_path);
  set_compute(config, flags.threads);
  auto model = attn::models::make_model(config, {config.vocab.size, config.vocab.size});
  const attn::Precision precision = attn::run::set_decoding_precision(
      *model, attn::apps::precision_flag(flags.precision).value_or(attn::Precision::f32));
  auto result = attn::bench::run_random_decode_benchmark(*model, flags.sentences > 0 ? flags.sentences : 500,
                                                         flags.source_length, translate_options(config, flags), 1);
  result.precision = attn::choice_name(precision);
  return result;
}

// Decoding's MFU: its model FLOP rate against the matmul peak at its precision, measured after
// the timed run. int8 has no peak of that kind here (measure_matmul_peak multiplies floats).
void add_mfu(attn::bench::DecodeBenchmarkResult& result) {
  auto precision = attn::parse_choice<attn::Precision>(result.precision);
  if (precision != attn::Precision::f32 && precision != attn::Precision::bf16) return;
  result.peak_gflops = attn::ops::measure_matmul_peak(*precision);
  result.mfu = result.gflops / result.peak_gflops;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attn-bench: speed of training steps and decoding on this machine"};
  app.require_subcommand(1);
  using attn::apps::at_least;
  bool json = false;

  CLI::App* train = app.add_subcommand("train", "time full training steps on synthetic batches");
  std::string config_path;
  std::vector<std::string> overrides;
  attn::bench::TrainBenchmarkOptions train_options;
  int threads = 0;
  train->add_option("--config", config_path, "model config (JSON)")->required();
  train->add_option("--set", overrides, "override a config key (repeatable)");
  train->add_option("--batch-sentences", train_options.batch_sentences, "sentences per batch (B)")->check(at_least(1));
  train->add_option("--src-len", train_options.source_length, "source length (S)")->check(at_least(1));
  train->add_option("--tgt-len", train_options.target_length, "target length (T)")->check(at_least(1));
  train->add_option("--steps", train_options.steps, "timed steps")->check(at_least(1));
  train->add_option("--warmup", train_options.warmup, "untimed steps first")->check(at_least(0));
  train->add_option("--threads", threads, "threads (default: train.threads)")->check(at_least(1));
  train->add_flag("--unfused-loss", train_options.unfused_loss,
                  "the loss over the full logits, as before the fused output projection + loss (a comparison)");
  train->add_flag("--json", json, "print one JSON object");

  CLI::App* decode = app.add_subcommand("decode", "time greedy or beam search");
  DecodeFlags flags;
  auto* model = decode->add_option("--model", flags.model_dir, "a trained run directory (default: as attn-translate)");
  auto* config = decode->add_option("--config", flags.config_path, "or a config: an untrained model on random input")
                     ->excludes(model);
  decode->add_option("--checkpoint", flags.checkpoint, attn::apps::kCheckpointHelp)->excludes(config);
  decode->add_option("--input", flags.input, "with --model: translate this file's lines (default: random ids)")
      ->excludes(config);
  decode->add_option("--beam", flags.beam, "beam size (1 = greedy)")->check(at_least(1));
  decode->add_option("--batch-size", flags.batch_size, "sentences per batch")->check(at_least(1));
  decode
      ->add_option("--batch-tokens", flags.batch_tokens,
                   "at most N source tokens per batch, sentences x the longest; 0 = no bound (default: "
                   "decode.batch_tokens)")
      ->check(at_least(0));
  decode->add_option("--sentences", flags.sentences, "how many sentences (default: the whole input, or 500)")
      ->check(at_least(1));
  decode->add_option("--src-len", flags.source_length, "random input length")->check(at_least(1));
  decode
      ->add_option("--window-batches", flags.window_batches,
                   "with --input: batches per length-sorted window, as attn-translate streams (default " +
                       std::to_string(flags.window_batches) + "); 0 sorts the whole input at once")
      ->check(at_least(0));
  decode->add_option("--parallel-batches", flags.parallel_batches,
                     "with --input: true decodes a batch a thread at once, false one batch on all threads (default: "
                     "decode.parallel_batches)");
  attn::apps::add_precision_option(*decode, flags.precision);
  decode->add_option("--threads", flags.threads, "threads (default: train.threads)")->check(at_least(1));
  decode->add_flag("--json", json, "print one JSON object");

  CLI::App* grad = app.add_subcommand(
      "grad", "write one training step (batch, parameters, logits, loss, gradients, updates) to a safetensors file");
  std::string grad_config_path;
  std::vector<std::string> grad_overrides;
  attn::bench::GradDumpOptions grad_options;
  grad->add_option("--config", grad_config_path, "model config (JSON)")->required();
  grad->add_option("--set", grad_overrides, "override a config key (repeatable)");
  grad->add_option("--output", grad_options.output, "the safetensors file to write")->required();
  grad->add_option("--batch-sentences", grad_options.batch_sentences, "sentences in the synthetic batch")
      ->check(at_least(1));
  grad->add_option("--src-len", grad_options.source_length, "longest source, eos included")->check(at_least(2));
  grad->add_option("--tgt-len", grad_options.target_length, "longest target, eos included")->check(at_least(2));
  grad->add_flag("--force", grad_options.force, "replace --output if it exists");
  grad->add_flag("--unfused-loss", grad_options.unfused_loss, "the loss over the full logits (as attn-bench train)");
  grad->add_flag("--corpus", grad_options.corpus,
                 "the first training batch of the config's corpora, with its run directory's vocabulary (instead of "
                 "a synthetic batch)");

  return attn::apps::run_app(app, argc, argv, [&] {
    if (*grad) {
      attn::io::Config grad_config = attn::io::load_config(grad_config_path, grad_overrides);
      set_compute(grad_config, 0);
      std::cout << attn::bench::write_grad_dump(grad_config, grad_options).to_text(grad_options.output) << '\n';
      return 0;
    }
    if (*decode) {
      auto result = run_decode(flags);
      add_mfu(result);
      std::cout << (json ? result.to_json().dump() : result.to_text()) << '\n';
      return 0;
    }
    attn::io::Config config = attn::io::load_config(config_path, overrides);
    set_compute(config, threads);
    auto result = attn::bench::run_train_benchmark(config, train_options);
    std::cout << (json ? result.to_json().dump() : result.to_text()) << '\n';
    return 0;
  });
}
