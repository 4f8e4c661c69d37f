#include "tiny_config.h"

namespace attn::testing {

nlohmann::json tiny_config(const TempDir& dir, const std::string& model_type) {
  return {{"output_dir", dir.file("run")},
          {"data",
           {{"train_src", dir.file("train.src")},
            {"train_tgt", dir.file("train.tgt")},
            {"valid_src", dir.file("valid.src")},
            {"valid_tgt", dir.file("valid.tgt")},
            {"max_len", 40}}},
          {"vocab", {{"type", "unigram"}, {"size", 64}, {"joint", true}}},
          {"model",
           {{"type", model_type},
            {"transformer",
             {{"d_model", 16},
              {"heads", 2},
              {"ffn_dim", 32},
              {"encoder_layers", 1},
              {"decoder_layers", 1},
              {"max_positions", 64}}},
            {"rnn", {{"embedding_dim", 16}, {"encoder_hidden", 8}, {"decoder_hidden", 16}, {"attention_dim", 8}}}}},
          {"train", {{"threads", 1}, {"valid_metric", "loss"}}}};
}

}  // namespace attn::testing
