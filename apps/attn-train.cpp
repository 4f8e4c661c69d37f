// attn-train: trains a translation model from a JSON config.
//   attn-train --config configs/en-it.json [--set train.max_steps=2000 ...] [--resume | --restart] [--dump-config]
//   attn-train --config configs/en-it.json --print output_dir     one resolved value, for scripts
//   attn-train --help-config      every config key: type, default, allowed values, help
//   mpirun -np N attn-train --config ...     data-parallel over N ranks (docs/guide.md,
//   "Training on several processes (MPI)")
#include <iostream>

#include "app_main.h"
#include "dist/communicator.h"
#include "io/config.h"
#include "io/config_value.h"
#include "train/trainer.h"

int main(int argc, char** argv) {
  attn::dist::WorldSession world(&argc, &argv);  // under mpirun: one rank of a data-parallel run
  CLI::App app{"attn-train: train a sequence-to-sequence translation model from a JSON config"};
  std::string config_path;
  std::vector<std::string> overrides;
  bool resume = false, restart = false, dump_config = false;
  app.add_flag_callback(
      "--help-config",
      [] {
        std::cout << attn::io::config_settings_table();
        throw CLI::Success();  // like --help: no --config needed
      },
      "print every config key with its type, default, allowed values and help, and exit");
  app.add_option("--config", config_path, "JSON config file (comments allowed)")->required();
  app.add_option("--set", overrides, "override a config key: --set train.max_steps=2000 (repeatable)");
  auto* resume_flag = app.add_flag("--resume", resume, "continue from OUTPUT_DIR/checkpoint.last.safetensors");
  app.add_flag("--restart", restart, "move the run in OUTPUT_DIR into a dated subfolder of it and start over")
      ->excludes(resume_flag);
  auto* dump = app.add_flag("--dump-config", dump_config, "print the resolved config and exit");
  std::string print_key;
  app.add_option("--print", print_key, "print one resolved config value (a key such as output_dir) and exit")
      ->excludes(dump);
  return world.finish(attn::apps::run_app(app, argc, argv, [&] {
    attn::io::Config config = attn::io::load_config(config_path, overrides);
    if (dump_config) {
      std::cout << attn::io::config_to_string(config) << '\n';
      return 0;
    }
    if (!print_key.empty()) {
      std::cout << attn::io::config_value_text(config, print_key) << '\n';
      return 0;
    }
    attn::train::TrainOptions options;
    options.resume = resume;
    options.restart = restart;
    attn::train::train(config, options);
    return 0;
  }));
}
