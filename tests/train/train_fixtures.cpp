#include "train/train_fixtures.h"

#include <cstring>
#include <filesystem>

#include <catch2/catch.hpp>

#include "core/check.h"
#include "data/data_fixtures.h"
#include "tiny_config.h"

namespace attn::testing {

using nlohmann::json;

TinyRun::TinyRun(const json& train) {
  run_dir = dir.file("run");
  write_file(dir.file("train.src"), synthetic_text(48, 21));
  write_file(dir.file("train.tgt"), synthetic_text(48, 22));
  write_file(dir.file("valid.src"), synthetic_text(6, 23));
  write_file(dir.file("valid.tgt"), synthetic_text(6, 24));
  json j = tiny_config(dir);
  j["vocab"]["size"] = 100;  // the size of tiny_vocab_model, copied in below
  j["model"]["transformer"].update({{"dropout", 0.1}, {"attention_dropout", 0.1}, {"max_positions", 48}});
  j["train"].update({{"batch_tokens", 128},
                     {"max_steps", 6},
                     {"save_every", 3},
                     {"valid_every", 1000},
                     {"log_every", 1},
                     {"learning_rate", 0.003},
                     {"warmup_steps", 4}});
  j["decode"] = {{"beam", 1}};
  j["train"].update(train);
  config = io::config_from_json(j);
  std::filesystem::create_directories(run_dir);
  std::filesystem::copy_file(tiny_vocab_model("unigram"), run_dir + "/spm.model");
}

train::TrainState TinyRun::last_state() const { return train::train_state_of(io::load_checkpoint(last_checkpoint())); }

std::string error_of_training(const io::Config& config, const train::TrainOptions& options) {
  try {
    train::train(config, options);
  } catch (const Error& error) {
    return error.what();
  }
  return "";
}

void check_identical(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& [name, tensor] : a) {
    INFO(name);
    const Tensor& other = b.at(name);
    REQUIRE(tensor.shape() == other.shape());
    CHECK(std::memcmp(tensor.data(), other.data(), tensor.numel() * sizeof(float)) == 0);
  }
}

void train_with_a_stop(const io::Config& config, int64_t stop_at) {
  io::Config first_half = config;
  first_half.train.max_steps = stop_at;
  train::train(first_half, {});
  train::TrainOptions resume;
  resume.resume = true;
  train::train(config, resume);
}

}  // namespace attn::testing
