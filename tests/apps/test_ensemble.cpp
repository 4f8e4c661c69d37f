// attn-translate --model A --model B: an ensemble of a Transformer run and an RNN run that
// share one vocabulary, from the command line.
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>

#include "apps/app_fixtures.h"

using namespace attn::testing;
namespace fs = std::filesystem;

namespace {

Result train(const TempDir& dir, const std::string& config, const std::string& extra = "") {
  Result trained = run_program(dir, "attn-train", "--config " + quoted(config) + extra);
  INFO("attn-train stderr:\n" << trained.err);
  REQUIRE(trained.exit_code == 0);
  return trained;
}

}  // namespace

TEST_CASE("attn-translate decodes with an ensemble of a Transformer run and an RNN run", "[cli][ensemble]") {
  TempDir dir, rnn_dir, other_dir;
  const nlohmann::json steps = {{"max_steps", 20}, {"valid_every", 20}};
  train(dir, write_tiny_setup(dir, steps, "transformer"));
  // The RNN run starts from the Transformer run's vocabulary (a supplied vocabulary is used as it is).
  const std::string transformer_run = dir.file("run"), rnn_run = rnn_dir.file("run"), other_run = other_dir.file("run");
  fs::create_directories(rnn_run);
  for (const char* file : {"spm.model", "spm.vocab"}) fs::copy_file(transformer_run + "/" + file, rnn_run + "/" + file);
  train(rnn_dir, write_tiny_setup(rnn_dir, steps, "rnn"));
  // A run with a vocabulary of its own.
  train(other_dir, write_tiny_setup(other_dir, {{"max_steps", 2}}, "rnn"), " --set vocab.size=48");

  const std::vector<std::string> valid = split_lines(read_text(dir.file("valid.src")));
  const std::string input = dir.file("input.txt");
  write_lines(input, {valid[0], valid[1], valid[2]});
  const std::string transformer = " --model " + quoted(transformer_run), rnn = " --model " + quoted(rnn_run);
  const auto translate = [&](const std::string& arguments) {
    return run_program(dir, "attn-translate", arguments + " --quiet --beam 3", input);
  };

  Result single = translate(transformer);
  REQUIRE(single.exit_code == 0);
  Result itself = translate(transformer + transformer);
  INFO("attn-translate stderr:\n" << itself.err);
  REQUIRE(itself.exit_code == 0);
  CHECK(itself.out == single.out);

  Result mixed = translate(transformer + rnn);
  INFO("attn-translate stderr:\n" << mixed.err);
  REQUIRE(mixed.exit_code == 0);
  CHECK(split_lines(mixed.out).size() == 3);
  Result weighted = translate(transformer + rnn + " --weights 2 1 --checkpoint " +
                              quoted(transformer_run + "/checkpoint.last.safetensors") + " --checkpoint ''");
  INFO("attn-translate stderr:\n" << weighted.err);
  CHECK(weighted.exit_code == 0);
  CHECK(split_lines(weighted.out).size() == 3);

  Result checkpoints =
      translate(transformer + rnn + " --checkpoint " + quoted(transformer_run + "/checkpoint.last.safetensors"));
  CHECK(checkpoints.exit_code != 0);
  CHECK_THAT(checkpoints.err, Catch::Contains("--checkpoint has 1 value for 2 --model"));
  Result weights = translate(transformer + rnn + " --weights 1");
  CHECK(weights.exit_code != 0);
  CHECK_THAT(weights.err, Catch::Contains("--weights has 1 value for 2 --model"));

  Result mismatch = translate(transformer + " --model " + quoted(other_run));
  CHECK(mismatch.exit_code != 0);
  CHECK_THAT(mismatch.err, Catch::Contains("--model " + other_run + " and --model " + transformer_run +
                                           " have different target vocabularies"));
  CHECK(split_lines(mismatch.err).size() == 1);

  Result dump = run_program(dir, "attn-dump-attention", transformer + rnn + " --src " + quoted(input));
  CHECK(dump.exit_code != 0);
  CHECK_THAT(dump.err, Catch::Contains("ensembles are for attn-translate"));
}
