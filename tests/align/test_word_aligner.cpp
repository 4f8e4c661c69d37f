// attn-align's model: EM's answer on toy corpora, the tension it learns, the same results on
// any thread count, and the errors of bad input.
#include <fstream>
#include <omp.h>
#include <random>

#include <catch2/catch.hpp>

#include "align/word_aligner.h"
#include "temp_dir.h"

using namespace attn::align;
using attn::testing::TempDir;

namespace {

TextPair write_pair(const TempDir& dir, const std::string& name, const std::vector<std::string>& source,
                    const std::vector<std::string>& target) {
  TextPair files{dir.file(name + ".src"), dir.file(name + ".tgt")};
  std::ofstream s(files.source_path), t(files.target_path);
  for (const auto& line : source) s << line << '\n';
  for (const auto& line : target) t << line << '\n';
  return files;
}

std::vector<PairLinks> aligned(const WordAligner& aligner, const TextPair& files) {
  std::vector<PairLinks> links;
  aligner.align(files,
                [&](const std::vector<PairLinks>& chunk) { links.insert(links.end(), chunk.begin(), chunk.end()); });
  return links;
}

std::vector<IterationStats> trained(WordAligner& aligner) {
  std::vector<IterationStats> stats;
  aligner.train([&](int, Direction, const IterationStats& s) { stats.push_back(s); });
  return stats;
}

// `lines` sentences of 3-8 words over a vocabulary of 30, translated word by word (word w ->
// "W<w>"), in the same order or reversed.
std::pair<std::vector<std::string>, std::vector<std::string>> word_for_word(int lines, bool reversed, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> source, target;
  for (int l = 0; l < lines; ++l) {
    std::vector<int> words(3 + rng() % 6);
    for (int& w : words) w = int(rng() % 30);
    std::string s, t;
    for (size_t i = 0; i < words.size(); ++i) {
      s += (i ? " w" : "w") + std::to_string(words[i]);
      const int translated = reversed ? words[words.size() - 1 - i] : words[i];
      t += (i ? " W" : "W") + std::to_string(translated);
    }
    source.push_back(s);
    target.push_back(t);
  }
  return {source, target};
}

}  // namespace

TEST_CASE("EM on a three-sentence toy finds the word-for-word links both ways", "[align][word_aligner]") {
  TempDir dir;
  const TextPair toy = write_pair(dir, "toy", {"the house", "the blue house", "the flower"},
                                  {"la maison", "la maison bleue", "la fleur"});
  AlignerOptions options;
  options.iterations = 10;
  {  // With the diagonal prior, three sentences cannot outweigh it: "blue house" links monotonically.
    WordAligner diagonal({toy}, options);
    trained(diagonal);
    CHECK(aligned(diagonal, toy)[1].forward == Links{{0, 0}, {1, 1}, {2, 2}});
  }
  // Tension 0, fixed: every position equally likely (IBM Model 1 with a null word): the words decide.
  options.model.initial_tension = 0;
  options.model.optimize_tension = false;
  WordAligner aligner({toy}, options);
  CHECK(aligner.source_words() == 4);
  CHECK(aligner.target_words() == 4);
  const std::vector<IterationStats> stats = trained(aligner);
  REQUIRE(stats.size() == 20);  // forward and reverse, 10 iterations
  // EM never lowers the likelihood.
  for (size_t i = 2; i < stats.size(); ++i) CHECK(stats[i].log_likelihood >= stats[i - 2].log_likelihood - 1e-9);
  const std::vector<PairLinks> links = aligned(aligner, toy);
  REQUIRE(links.size() == 3);
  CHECK(links[0].forward == Links{{0, 0}, {1, 1}});
  CHECK(links[1].forward == Links{{0, 0}, {2, 1}, {1, 2}});
  CHECK(links[2].forward == Links{{0, 0}, {1, 1}});
  CHECK(links[1].reverse == Links{{0, 0}, {2, 1}, {1, 2}});
  CHECK(links[2].reverse == Links{{0, 0}, {1, 1}});
}

TEST_CASE("the tension grows on monotone translations and falls on reversed ones", "[align][word_aligner]") {
  TempDir dir;
  AlignerOptions options;
  options.iterations = 3;
  options.reverse = false;
  for (bool reversed : {false, true}) {
    const auto [source, target] = word_for_word(200, reversed, 3);
    WordAligner aligner({write_pair(dir, reversed ? "rev" : "mono", source, target)}, options);
    const double tension = trained(aligner).back().tension;
    if (reversed)
      CHECK(tension < options.model.initial_tension);
    else
      CHECK(tension > options.model.initial_tension);
  }
}

TEST_CASE("attn-align's model gives the same tables and links on any thread count", "[align][word_aligner]") {
  TempDir dir;
  const auto [source, target] = word_for_word(300, false, 11);
  const TextPair corpus = write_pair(dir, "c", source, target);
  AlignerOptions options;
  options.iterations = 3;
  options.chunk_lines = 37;  // several chunks, the last one short
  auto run = [&](int threads) {
    omp_set_num_threads(threads);
    WordAligner aligner({corpus}, options);
    std::vector<IterationStats> stats = trained(aligner);
    std::vector<PairLinks> links = aligned(aligner, corpus);
    omp_set_num_threads(1);
    return std::make_pair(stats, links);
  };
  const auto one = run(1), two = run(2), three = run(3);
  for (const auto* other : {&two, &three}) {
    REQUIRE(other->first.size() == one.first.size());
    for (size_t i = 0; i < one.first.size(); ++i) {
      CHECK(other->first[i].log_likelihood == one.first[i].log_likelihood);  // bit for bit
      CHECK(other->first[i].tension == one.first[i].tension);
    }
    REQUIRE(other->second.size() == one.second.size());
    for (size_t i = 0; i < one.second.size(); ++i) {
      CHECK(other->second[i].forward == one.second[i].forward);
      CHECK(other->second[i].reverse == one.second[i].reverse);
    }
  }
}

TEST_CASE("words: whitespace-separated - lowercased on request - unseen words and empty lines get no link",
          "[align][word_aligner]") {
  CHECK(split_words("  Èra\tla CASA.\r", false) == std::vector<std::string>{"Èra", "la", "CASA."});
  CHECK(split_words("Èra ÀÉÌÒÙ Ç × CASA", true) == std::vector<std::string>{"èra", "àéìòù", "ç", "×", "casa"});
  TempDir dir;
  const TextPair toy = write_pair(dir, "toy", {"the house", "", "the flower"}, {"la maison", "la", "la fleur"});
  WordAligner aligner({toy}, AlignerOptions{});
  trained(aligner);
  const std::vector<PairLinks> links = aligned(aligner, write_pair(dir, "new", {"the tree", "the"}, {"la arbre", ""}));
  REQUIRE(links.size() == 2);
  CHECK(links[0].forward == Links{{0, 0}});  // "arbre" and "tree" were never seen
  CHECK(links[1].forward.empty());
  CHECK(links[1].reverse.empty());
}

TEST_CASE("bad input: a missing file or files of different lengths are errors naming them", "[align][word_aligner]") {
  TempDir dir;
  const TextPair shorter = write_pair(dir, "short", {"a", "b", "c"}, {"A", "B"});
  CHECK_THROWS_WITH(WordAligner({shorter}, AlignerOptions{}), Catch::Contains(shorter.target_path) &&
                                                                  Catch::Contains("has 2 lines") &&
                                                                  Catch::Contains(shorter.source_path));
  CHECK_THROWS_WITH(WordAligner({{dir.file("none.src"), shorter.target_path}}, AlignerOptions{}),
                    Catch::Contains("cannot open") && Catch::Contains("none.src"));
  AlignerOptions none;
  none.forward = none.reverse = false;
  CHECK_THROWS_WITH(WordAligner({shorter}, none), Catch::Contains("direction"));
}
