#pragma once
// Flags that set a config key (attn-translate --beam sets decode.beam, attn-serve --threads
// train.threads): the key's declaration (io/config.h) gives the flag its help, default and
// allowed values, the config reader checks its value, and the program applies it to each run's
// config as `attn-train --set` would, before reading its settings from the config.
//
//   attn::apps::ConfigFlags config_flags;
//   attn::apps::add_config_flag(app, "--beam", "decode.beam", config_flags);
//   ...
//   const attn::io::Config config = config_flags.applied(run.config);   // decode.beam as given
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "io/config.h"

namespace attn::apps {

// The config values a program's flags gave, in command-line order.
class ConfigFlags {
 public:
  // `config` with the flags' values; an invalid combination ("decode.nbest (6) must be <=
  // decode.beam (5)") is an error naming the flags given.
  io::Config applied(const io::Config& config) const {
    std::vector<std::string> overrides;
    for (const Given& given : given_) overrides.push_back(given.key + "=" + given.value);
    try {
      return io::with_overrides(config, overrides);
    } catch (const Error& error) {
      std::string flags;
      for (const Given& given : given_) flags += (flags.empty() ? "" : " ") + given.flag + " " + given.value;
      throw Error(flags + ": " + error.what());
    }
  }
  // Whether a flag set `key`.
  bool sets(const std::string& key) const {
    for (const Given& given : given_)
      if (given.key == key) return true;
    return false;
  }
  void add(const std::string& flag, const std::string& key, const std::string& value) {
    given_.push_back({flag, key, value});
  }

 private:
  struct Given {
    std::string flag, key, value;
  };
  std::vector<Given> given_;
};

// The reader's message about `key` without the key, which CLI11 replaces with the flag:
// "decode.beam must be >= 1; got 0" -> "must be >= 1; got 0".
inline std::string without_key(const std::string& message, const std::string& key) {
  for (const std::string& prefix : {"config key " + key + ": ", key + " "})
    if (message.compare(0, prefix.size(), prefix) == 0) return message.substr(prefix.size());
  return message;
}

// A flag's value as `--set` reads it: the text of a string setting is taken literally, so that
// `--prefix 5` or `--prefix true` is that text, not a number or a boolean.
inline std::string override_text(const io::SettingInfo& setting, const std::string& value) {
  return setting.type == "string" ? nlohmann::json(value).dump() : value;
}

// Adds `flag`, which sets the config key `key`. Its help is the key's one line (or `help`, the
// program's own words for it) with the key, its declared default and its allowed values; a
// value the key does not allow is a one-line error naming the flag ("--beam: must be >= 1; got 0").
inline CLI::Option* add_config_flag(CLI::App& app, const std::string& flag, const std::string& key, ConfigFlags& flags,
                                    const std::string& help = "") {
  const io::SettingInfo setting = io::config_setting(key);
  const std::string text = (help.empty() ? setting.help : help) + " (default: the run's " + key +
                           ", declared default " + setting.default_text +
                           (setting.allowed.empty() ? "" : "; allowed: " + setting.allowed) + ")";
  CLI::Option* option = app.add_option_function<std::string>(
      flag,
      [&flags, flag, key, setting](const std::string& value) { flags.add(flag, key, override_text(setting, value)); },
      text);
  option->check(CLI::Validator(
      [key, setting](std::string& value) -> std::string {
        try {
          io::check_config_setting(key, override_text(setting, value));
          return "";
        } catch (const nlohmann::json::exception&) {
          return "not valid UTF-8";
        } catch (const Error& error) {
          return without_key(error.what(), key);
        }
      },
      ""));
  const std::string type = setting.type == "integer" ? "INT" : setting.type == "number" ? "FLOAT" : "TEXT";
  return option->type_name(type);
}

}  // namespace attn::apps
