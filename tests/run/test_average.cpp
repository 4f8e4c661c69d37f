// Checkpoint averaging (run/average.h): exact means of known tensors, the metadata load_run
// needs, and refusals naming the file that does not fit.
#include <filesystem>

#include <catch2/catch.hpp>

#include "io/checkpoint.h"
#include "run/average.h"
#include "run/run_files.h"
#include "temp_dir.h"

using namespace attn;
using attn::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// A checkpoint with parameters "a" (2, 2) and "b" (3), holding `a` and `b`, of run `run_id`
// ("": none, as before run ids).
void write_checkpoint(const std::string& path, const std::vector<float>& a, const std::vector<float>& b,
                      const std::string& vocab = "{\"spm.model\":\"00\"}", const std::string& run_id = "") {
  io::CheckpointExtras extras;
  extras.metadata = {{"config", "{\"model\":{}}"}, {run::kVocabDigestsKey, vocab}, {"train_state", "{}"}};
  if (!run_id.empty()) extras.metadata[run::kRunIdKey] = run_id;
  extras.tensors["optimizer.m"] = Tensor::full({7}, 1.f);
  io::save_checkpoint(path, {{"a", Tensor::from_vector({2, 2}, a)}, {"b", Tensor::from_vector({3}, b)}}, extras);
}

}  // namespace

TEST_CASE("averaging checkpoints of known tensors is exact and keeps config and vocabulary metadata",
          "[run][average]") {
  TempDir dir;
  write_checkpoint(dir.file("1.safetensors"), {1, 2, 3, 4}, {0.5f, -1, 10});
  write_checkpoint(dir.file("2.safetensors"), {2, 4, 6, 8}, {1.5f, -2, 20});
  write_checkpoint(dir.file("3.safetensors"), {3, 6, 9, 12}, {-2, 0, 30});
  const std::string out = dir.file("avg.safetensors");
  run::average_checkpoints({dir.file("1.safetensors"), dir.file("2.safetensors"), dir.file("3.safetensors")}, out,
                           false);
  io::Checkpoint averaged = io::load_checkpoint(out);
  CHECK(averaged.parameters.at("a").to_vector() == std::vector<float>{2, 4, 6, 8});
  CHECK(averaged.parameters.at("b").to_vector() == std::vector<float>{0, -1, 20});
  CHECK(averaged.extras.empty());  // no optimizer state
  CHECK(averaged.metadata.at("config") == "{\"model\":{}}");
  CHECK(averaged.metadata.at(run::kVocabDigestsKey) == "{\"spm.model\":\"00\"}");
  CHECK(averaged.metadata.at("averaged_from") == "[\"1.safetensors\",\"2.safetensors\",\"3.safetensors\"]");
  CHECK(averaged.metadata.count("train_state") == 0);

  SECTION("the average of one checkpoint is that checkpoint's parameters") {
    run::Averaged one = run::average_parameters({dir.file("2.safetensors")});
    CHECK(one.parameters.at("a").to_vector() == std::vector<float>{2, 4, 6, 8});
  }
  SECTION("an existing output is refused without overwrite and left as it was") {
    const auto before = fs::last_write_time(out);
    CHECK_THROWS_WITH(run::average_checkpoints({dir.file("1.safetensors")}, out, false),
                      Catch::Contains(out) && Catch::Contains("--force"));
    CHECK(fs::last_write_time(out) == before);
    run::average_checkpoints({dir.file("1.safetensors")}, out, true);
    CHECK(io::load_checkpoint(out).parameters.at("a").to_vector() == std::vector<float>{1, 2, 3, 4});
  }
}

TEST_CASE("averaging refuses a checkpoint of another model or vocabulary - naming it", "[run][average]") {
  TempDir dir;
  write_checkpoint(dir.file("good.safetensors"), {1, 2, 3, 4}, {1, 2, 3});
  const std::string other = dir.file("other.safetensors");
  SECTION("another shape") {
    io::save_checkpoint(other, {{"a", Tensor::full({4}, 1.f)}, {"b", Tensor::full({3}, 1.f)}}, {});
    CHECK_THROWS_WITH(run::average_parameters({dir.file("good.safetensors"), other}),
                      Catch::Contains(other) && Catch::Contains("\"a\"") && Catch::Contains("(4)"));
  }
  SECTION("a missing parameter") {
    io::save_checkpoint(other, {{"a", Tensor::full({2, 2}, 1.f)}}, {});
    CHECK_THROWS_WITH(run::average_parameters({dir.file("good.safetensors"), other}),
                      Catch::Contains(other) && Catch::Contains("has no parameter \"b\""));
  }
  SECTION("an extra parameter") {
    io::save_checkpoint(
        other, {{"a", Tensor::full({2, 2}, 1.f)}, {"b", Tensor::full({3}, 1.f)}, {"c", Tensor::full({1}, 1.f)}}, {});
    CHECK_THROWS_WITH(run::average_parameters({dir.file("good.safetensors"), other}),
                      Catch::Contains(other) && Catch::Contains("\"c\""));
  }
  SECTION("another vocabulary") {
    write_checkpoint(other, {1, 2, 3, 4}, {1, 2, 3}, "{\"spm.model\":\"ff\"}");
    CHECK_THROWS_WITH(run::average_parameters({dir.file("good.safetensors"), other}),
                      Catch::Contains(other) && Catch::Contains("another vocabulary"));
  }
  CHECK_FALSE(fs::exists(dir.file("avg.safetensors")));
}

TEST_CASE("the last N step checkpoints are the newest by step number", "[run][average]") {
  TempDir dir;
  for (int64_t step : {5, 20, 100, 15})
    write_checkpoint(run::step_checkpoint_path(dir.path().string(), step), {1, 2, 3, 4}, {1, 2, 3});
  write_checkpoint(dir.file("checkpoint.step-x.safetensors"), {1, 2, 3, 4}, {1, 2, 3});  // not a step: ignored
  CHECK(run::step_checkpoints(dir.path().string()).size() == 4);
  const auto last = run::last_step_checkpoints(dir.path().string(), 2);
  REQUIRE(last.size() == 2);
  CHECK(fs::path(last[0]).filename() == "checkpoint.step-20.safetensors");
  CHECK(fs::path(last[1]).filename() == "checkpoint.step-100.safetensors");
  CHECK_THROWS_WITH(run::last_step_checkpoints(dir.path().string(), 5), Catch::Contains("has only 4"));
}

TEST_CASE("averaging refuses checkpoints of different runs - naming two files and their run ids",
          "[run][average][restart]") {
  TempDir dir;
  const std::string vocab = "{\"spm.model\":\"00\"}";
  const std::string run_a(32, 'a'), run_b(32, 'b');
  const std::string a1 = dir.file("a1.safetensors"), a2 = dir.file("a2.safetensors");
  write_checkpoint(a1, {1, 2, 3, 4}, {1, 2, 3}, vocab, run_a);
  write_checkpoint(a2, {3, 4, 5, 6}, {3, 4, 5}, vocab, run_a);
  const std::string out = dir.file("avg.safetensors");
  SECTION("one run: the average records its id") {
    run::average_checkpoints({a1, a2}, out, false);
    CHECK(io::load_checkpoint(out).metadata.at(run::kRunIdKey) == run_a);
  }
  SECTION("another run") {
    const std::string b = dir.file("b.safetensors");
    write_checkpoint(b, {1, 2, 3, 4}, {1, 2, 3}, vocab, run_b);
    CHECK_THROWS_WITH(run::average_checkpoints({a1, b, a2}, out, false),
                      b + " is of run " + run_b + " but " + a1 + " is of run " + run_a +
                          ": checkpoints of different runs cannot be averaged; average checkpoints of one run");
    CHECK_FALSE(fs::exists(out));
  }
  SECTION("a checkpoint from before run ids among a run's") {
    const std::string old = dir.file("old.safetensors");
    write_checkpoint(old, {1, 2, 3, 4}, {1, 2, 3}, vocab);
    CHECK_THROWS_WITH(
        run::average_checkpoints({a1, old}, out, false),
        Catch::StartsWith(old + " records no run id (saved before run ids existed) but " + a1 + " is of run " + run_a));
    CHECK_THROWS_WITH(run::average_checkpoints({old, a1}, out, false),
                      Catch::StartsWith(a1 + " is of run " + run_a + " but " + old + " records no run id"));
    CHECK_FALSE(fs::exists(out));
  }
  SECTION("a malformed run id") {
    const std::string bad = dir.file("bad.safetensors");
    write_checkpoint(bad, {1, 2, 3, 4}, {1, 2, 3}, vocab, "not hex");
    CHECK_THROWS_WITH(run::average_checkpoints({a1, bad}, out, false),
                      bad + ": checkpoint metadata \"run_id\" is not 32 lowercase hex digits");
  }
}

TEST_CASE("checkpoints from before run ids still average together - the average records none", "[run][average]") {
  TempDir dir;
  write_checkpoint(dir.file("1.safetensors"), {1, 2, 3, 4}, {1, 2, 3});
  write_checkpoint(dir.file("2.safetensors"), {3, 4, 5, 6}, {3, 4, 5});
  run::average_checkpoints({dir.file("1.safetensors"), dir.file("2.safetensors")}, dir.file("avg.safetensors"), false);
  io::Checkpoint averaged = io::load_checkpoint(dir.file("avg.safetensors"));
  CHECK(averaged.parameters.at("a").to_vector() == std::vector<float>{2, 3, 4, 5});
  CHECK(averaged.metadata.count(run::kRunIdKey) == 0);
}
