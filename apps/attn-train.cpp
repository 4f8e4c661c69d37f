// attn-train: placeholder until the trainer lands (issue 3); prints its usage.
#include <CLI/CLI.hpp>

int main(int argc, char** argv) {
  CLI::App app{"attn-train: train a sequence-to-sequence translation model"};
  std::string config;
  app.add_option("--config", config, "JSON config file");
  CLI11_PARSE(app, argc, argv);
  return 0;
}
