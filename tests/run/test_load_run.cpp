// load_run: the vocabulary check of an ensemble's runs.
#include <catch2/catch.hpp>

#include "run/load_run.h"

using namespace attn;

TEST_CASE("check_same_vocabularies names both runs when a vocabulary differs", "[run][ensemble]") {
  const run::RunPaths joint = run::run_paths("runs/a", true), separate = run::run_paths("runs/b", false);
  const run::VocabDigests joint_digests = {{"spm.model", "1111aaaa2222bbbb"}};
  SECTION("the same files pass, joint or not") {
    CHECK_NOTHROW(run::check_same_vocabularies(joint, joint_digests, run::run_paths("runs/c", true), joint_digests));
    CHECK_NOTHROW(
        run::check_same_vocabularies(joint, joint_digests, separate,
                                     {{"spm.src.model", "1111aaaa2222bbbb"}, {"spm.tgt.model", "1111aaaa2222bbbb"}}));
  }
  SECTION("another target vocabulary") {
    CHECK_THROWS_WITH(
        run::check_same_vocabularies(joint, joint_digests, separate,
                                     {{"spm.src.model", "1111aaaa2222bbbb"}, {"spm.tgt.model", "3333cccc4444dddd"}}),
        Catch::Contains("--model runs/b and --model runs/a have different target vocabularies") &&
            Catch::Contains("spm.tgt.model sha256 3333cccc4444") && Catch::Contains("spm.model sha256 1111aaaa2222"));
  }
  SECTION("another source vocabulary") {
    CHECK_THROWS_WITH(
        run::check_same_vocabularies(joint, joint_digests, separate,
                                     {{"spm.src.model", "3333cccc4444dddd"}, {"spm.tgt.model", "1111aaaa2222bbbb"}}),
        Catch::Contains("different source vocabularies"));
  }
}
