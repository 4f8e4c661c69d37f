// config_value: one resolved config value by its dotted key (attn-train --print).
#include <catch2/catch.hpp>

#include "io/config.h"
#include "io/config_value.h"

using namespace attn::io;

TEST_CASE("config_value finds leaves and sections by dotted key - and names an unknown key", "[io][config]") {
  Config config;
  config.output_dir = "runs/x y";
  config.train.max_steps = 123;
  CHECK(config_value_text(config, "output_dir") == "runs/x y");  // no quotes: a script reads it as is
  CHECK(config_value_text(config, "train.max_steps") == "123");
  CHECK(config_value(config, "model.transformer").at("d_model") == config.model.transformer.d_model);
  CHECK(config_value_text(config, "data.test_src").empty());
  CHECK_THROWS_WITH(config_value(config, "trian.max_steps"), "unknown config key trian; did you mean train?");
  CHECK_THROWS_WITH(config_value(config, "train.max_stpes"),
                    "unknown config key train.max_stpes; did you mean train.max_steps?");
  CHECK_THROWS_WITH(config_value(config, "output_dir.x"), Catch::Contains("output_dir is a value, not a section"));
  CHECK_THROWS_WITH(config_value(config, "zzzzzzzz"), "unknown config key zzzzzzzz");
}
