// apps/config_flags.h: a flag that sets a config key reads its value as `--set` does, but takes a
// string setting's text literally, and refuses what the key does not allow, naming the flag.
#include <algorithm>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "config_flags.h"

namespace {

// The config after parsing `arguments` with --beam and --prefix bound to their keys.
attn::io::Config parsed(std::vector<std::string> arguments) {
  CLI::App app;
  attn::apps::ConfigFlags flags;
  attn::apps::add_config_flag(app, "--beam", "decode.beam", flags);
  attn::apps::add_config_flag(app, "--prefix", "decode.prefix", flags);
  std::reverse(arguments.begin(), arguments.end());  // CLI11 takes them last first
  app.parse(arguments);
  return flags.applied(attn::io::Config{});
}

}  // namespace

TEST_CASE("a config flag sets its key - a string's text taken literally", "[apps][config]") {
  CHECK(parsed({"--beam", "3"}).decode.beam == 3);
  CHECK(parsed({}).decode.beam == attn::io::Config{}.decode.beam);
  for (const std::string text : {"Io", "5", "true", "[1]", "null", "", "\"quoted\""}) {
    INFO(text);
    CHECK(parsed({"--prefix", text}).decode.prefix == text);
  }
}

TEST_CASE("a config flag refuses a value its key does not allow - naming the flag", "[apps][config]") {
  CHECK_THROWS_WITH(parsed({"--beam", "0"}), Catch::Contains("--beam") && Catch::Contains("must be >= 1; got 0"));
  CHECK_THROWS_WITH(parsed({"--beam", "two"}), Catch::Contains("--beam"));
  CHECK_THROWS_AS(parsed({"--prefix", "\xff"}), CLI::ValidationError);
}
