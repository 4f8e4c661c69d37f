// attn-bench: measures training (and decoding) speed on fixed synthetic shapes.
//   attn-bench train --config configs/bench/transformer-small.json --batch-sentences 64 --src-len 24 --tgt-len 24 --steps 10 [--json]
#include <iostream>

#include "app_main.h"
#include "bench/train_benchmark.h"
#include "dnnl/context.h"
#include "io/config.h"

int main(int argc, char** argv) {
  CLI::App app{"attn-bench: speed of training steps and decoding on this machine"};
  app.require_subcommand(1);
  CLI::App* train = app.add_subcommand("train", "time full training steps on synthetic batches");
  std::string config_path;
  std::vector<std::string> overrides;
  attn::bench::TrainBenchmarkOptions options;
  bool json = false;
  int threads = 0;
  train->add_option("--config", config_path, "model config (JSON)")->required();
  train->add_option("--set", overrides, "override a config key (repeatable)");
  train->add_option("--batch-sentences", options.batch_sentences, "sentences per batch (B)");
  train->add_option("--src-len", options.source_length, "source length (S)");
  train->add_option("--tgt-len", options.target_length, "target length (T)");
  train->add_option("--steps", options.steps, "timed steps");
  train->add_option("--warmup", options.warmup, "untimed steps first");
  train->add_option("--threads", threads, "OpenMP threads (default: train.threads)");
  train->add_flag("--json", json, "print one JSON object");
  CLI11_PARSE(app, argc, argv);
  return attn::apps::run_app([&] {
    attn::io::Config config = attn::io::load_config(config_path, overrides);
    attn::dnn::set_num_threads(threads > 0 ? threads : config.train.threads);
    attn::dnn::Context::get().set_matmul_precision(config.train.precision == "bf16"
                                                      ? attn::dnn::MatmulPrecision::bf16
                                                      : attn::dnn::MatmulPrecision::f32);
    attn::bench::TrainBenchmarkResult result = attn::bench::run_train_benchmark(config, options);
    std::cout << (json ? result.to_json().dump() : result.to_text()) << '\n';
    return 0;
  });
}
