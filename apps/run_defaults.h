#pragma once
// Which run and which files a program reads when the user does not name them: program
// policy, shared by attn-translate, attn-score, attn-dump-attention and attn-bench decode.
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/check.h"
#include "io/config.h"
#include "run/run_files.h"

namespace attn::apps {

// Help of --checkpoint, the same in every program that loads a run.
inline const char* const kCheckpointHelp =
    "load this checkpoint of the run's model, e.g. attn-average's output (default: the run's checkpoint.best, "
    "else checkpoint.last)";

// The config whose output_dir is the default run, relative to the current directory.
inline const char* const kDefaultConfig = "configs/en-it.json";

// --model, else $ATTN_MODEL, else the default run: the output_dir of configs/en-it.json, or
// the config's default output_dir (runs/en-it) when that file is not here either. When the
// chosen directory does not exist, the error says where it looked and what to pass.
inline std::string resolve_model_dir(const std::string& model_flag) {
  namespace fs = std::filesystem;
  if (!model_flag.empty()) return model_flag;
  if (const char* env = std::getenv("ATTN_MODEL"); env && *env) {
    ATTN_CHECK(fs::is_directory(env), "$ATTN_MODEL is '", env,
               "', which is not a directory; set it to a run directory (an output_dir of attn-train) or pass --model");
    return env;
  }
  const bool have_config = fs::exists(kDefaultConfig);
  const std::string dir = have_config ? io::load_config(kDefaultConfig).output_dir : io::Config{}.output_dir;
  ATTN_CHECK(fs::is_directory(dir), "no model: --model is not given, $ATTN_MODEL is not set, and the default run '",
             dir, "' (",
             have_config ? std::string("output_dir of ") + kDefaultConfig
                         : std::string("there is no ") + kDefaultConfig + " here either",
             ") does not exist in ", fs::current_path().string(),
             "; pass --model RUN_DIR (the output_dir of a trained config) or set ATTN_MODEL=RUN_DIR");
  return dir;
}

// The resolved config of a run directory, without loading its model.
inline io::Config run_config(const std::string& run_dir) {
  return io::load_config(run::run_paths(run_dir, true).config);
}

// --subset: the dev or test set named by a run's config. `side` is "src" (the text to
// translate) or "tgt" (the reference). Paths in a config are relative to the directory
// attn-train ran in, as for training.
inline std::string subset_file(const io::Config& config, const std::string& run_dir, const std::string& subset,
                               const std::string& side) {
  ATTN_CHECK(subset == "dev" || subset == "test", "--subset must be dev or test; got '", subset, "'");
  const bool test = subset == "test", source = side == "src";
  const std::string key = std::string("data.") + (test ? "test_" : "valid_") + side;
  const std::string& path = test ? (source ? config.data.test_src : config.data.test_tgt)
                                 : (source ? config.data.valid_src : config.data.valid_tgt);
  const std::string config_path = run::run_paths(run_dir, true).config;
  ATTN_CHECK(!path.empty(), "--subset ", subset, ": ", key, " is not set in ", config_path,
             "; set it in the config (or pass the file itself)");
  ATTN_CHECK(std::filesystem::exists(path), "--subset ", subset, ": ", key, " of ", config_path, " is '", path,
             "', which does not exist in ", std::filesystem::current_path().string(),
             " (config paths are relative to the directory attn-train ran in)");
  return path;
}

}  // namespace attn::apps
