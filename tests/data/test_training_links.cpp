// Reference alignments of training pairs (data.train_alignments): Pharaoh lines, word links
// turned into piece links, their way through packing, concatenation, batches and the stream.
#include <algorithm>
#include <fstream>
#include <functional>
#include <sstream>

#include <catch2/catch.hpp>

#include "core/check.h"
#include "data/batch.h"
#include "data/data_fixtures.h"
#include "data/pair_concat.h"
#include "data/pair_reader.h"
#include "data/training_links.h"
#include "data/training_stream.h"

using namespace attn;
using attn::testing::TempDir;
using attn::testing::write_file;

namespace {

const data::Vocab& vocab() {
  static const data::Vocab v = data::Vocab::load(attn::testing::tiny_vocab_model("unigram"));
  return v;
}

std::vector<int32_t> encoded(const std::string& text) {
  std::vector<int32_t> ids = vocab().encode(text);
  ids.push_back(data::kEosId);
  return ids;
}

// The text positions of word w's pieces, read off the pieces' text by hand: a piece that begins
// with U+2581 starts the next word.
std::vector<int32_t> pieces_of_word(const std::vector<int32_t>& ids, int64_t w) {
  std::vector<int32_t> positions;
  int64_t word = -1;
  for (size_t p = 0; p + 1 < ids.size(); ++p) {
    const std::string piece = vocab().piece(ids[p]);
    if (piece.rfind("\xE2\x96\x81", 0) == 0) ++word;
    if (word == w) positions.push_back(int32_t(p));
  }
  return positions;
}

std::string error_of(const std::function<void()>& run) {
  try {
    run();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("training links: Pharaoh lines parse - bad tokens are errors quoting them", "[data][training_links]") {
  using Links = std::vector<std::pair<int64_t, int64_t>>;
  CHECK(data::parse_training_links("0-1 2-0\t1-1 ") == Links{{0, 1}, {2, 0}, {1, 1}});
  CHECK(data::parse_training_links("").empty());
  CHECK(data::parse_training_links("   ").empty());
  for (const char* bad : {"0-", "-1", "a-1", "0-1-2", "01", "0?1", "-1-2"})
    CHECK(error_of([&] { data::parse_training_links(std::string("0-0 ") + bad); }) ==
          "\"" + std::string(bad) + "\" is not a link \"i-j\" (source and target positions from 0)");
  CHECK(data::whitespace_word_count(" a  b\tc ") == 3);
}

TEST_CASE("training links: word links become links of every piece pair of the two words", "[data][training_links]") {
  const std::string src = "tokari nameluso pe", tgt = "lumeka to";
  const std::vector<int32_t> s = encoded(src), t = encoded(tgt);
  REQUIRE(pieces_of_word(s, 0).size() + pieces_of_word(s, 1).size() + pieces_of_word(s, 2).size() == s.size() - 1);
  const data::PieceLinks links =
      data::pair_links("1-0 0-1 2-1", AlignmentLevel::words, src, tgt, s, t, vocab(), vocab());
  data::PieceLinks expected;
  for (auto [ws, wt] : {std::pair{1, 0}, std::pair{0, 1}, std::pair{2, 1}})
    for (int32_t a : pieces_of_word(s, ws))
      for (int32_t b : pieces_of_word(t, wt)) expected.emplace_back(a, b);
  std::sort(expected.begin(), expected.end(),
            [](auto x, auto y) { return std::pair(x.second, x.first) < std::pair(y.second, y.first); });
  CHECK(links == expected);
  CHECK(data::piece_words(s, vocab()).back() == -1);  // eos belongs to no word

  // Pieces: the positions as they are, eos excluded.
  CHECK(data::pair_links("0-0 1-0", AlignmentLevel::pieces, src, tgt, s, t, vocab(), vocab()) ==
        data::PieceLinks{{0, 0}, {1, 0}});
  CHECK(error_of([&] { data::pair_links("3-0", AlignmentLevel::words, src, tgt, s, t, vocab(), vocab()); }) ==
        "link 3-0 lies beyond the pair (3 source and 2 target words)");
  CHECK(error_of([&] {
          data::pair_links("0-" + std::to_string(t.size() - 1), AlignmentLevel::pieces, src, tgt, s, t, vocab(),
                           vocab());
        }) == "link 0-" + std::to_string(t.size() - 1) + " lies beyond the pair (" + std::to_string(s.size() - 1) +
                  " source and " + std::to_string(t.size() - 1) + " target pieces)");
}

TEST_CASE("training links: packed - joined with the parts' lengths - batched and sharded", "[data][training_links]") {
  data::Example first{{11, 12, 13, data::kEosId}, {21, 22, data::kEosId}, 0, 0, {{2, 0}, {0, 1}, {1, 1}}};
  data::Example second{{14, data::kEosId}, {23, 24, 25, data::kEosId}, 1, 0, {{0, 2}}};
  data::PackedExamples packed;
  packed.add(first);
  packed.add(second);
  CHECK(packed.unpack(0).links == first.links);
  CHECK(packed.unpack(1).links == second.links);
  CHECK(packed.unpack(1).tgt == second.tgt);

  // Every example joined with a partner (two examples: the partner is drawn from both).
  int64_t joined = 0;
  data::PackedExamples joins = data::concatenate_pairs(packed, {1.0, 2}, 100, 5, joined);
  REQUIRE(joined == 2);
  for (size_t i = 0; i < joins.size(); ++i) {
    const data::Example join = joins.unpack(i);
    const data::Example& head = i == 0 ? first : second;
    const data::Example& partner = join.src.size() - head.src.size() + 1 == first.src.size() ? first : second;
    data::PieceLinks expected = head.links;
    for (auto [s, t] : partner.links)
      expected.emplace_back(s + int32_t(head.src.size() - 1), t + int32_t(head.tgt.size() - 1));
    CHECK(join.links == expected);
  }

  data::Batch batch = data::make_batch({&first, &second}, 8);
  CHECK(batch.links == std::vector<data::PieceLinks>{first.links, second.links});
  CHECK(data::linked_target_rows(batch) == 3);  // targets 0 and 1 of the first, 2 of the second
  CHECK(data::shard(batch, 1, 2).links == std::vector<data::PieceLinks>{second.links});
}

namespace {

struct Files {
  std::string src, tgt, links;
};

// Synthetic pairs with word links i-i (as many as the shorter side has words).
Files aligned_corpus(const TempDir& dir, int lines) {
  Files files{dir.file("c.src"), dir.file("c.tgt"), dir.file("c.links")};
  const std::string src = attn::testing::synthetic_text(lines, 31), tgt = attn::testing::synthetic_text(lines, 32);
  write_file(files.src, src);
  write_file(files.tgt, tgt);
  std::istringstream s(src), t(tgt);
  std::string links, a, b;
  while (std::getline(s, a) && std::getline(t, b)) {
    const int64_t words = std::min(data::whitespace_word_count(a), data::whitespace_word_count(b));
    for (int64_t i = 0; i < words; ++i) links += (i ? " " : "") + std::to_string(i) + "-" + std::to_string(i);
    links += "\n";
  }
  write_file(files.links, links);
  return files;
}

data::StreamOptions small_windows() {
  data::StreamOptions options;
  options.buffer_pairs = 160;
  options.max_len = 1000;
  options.batching.batch_tokens = 160;
  options.batching.pad_multiple = 8;
  options.batching.seed = 7;
  return options;
}

}  // namespace

TEST_CASE("training stream with alignments: every batch row carries its links - resume is exact",
          "[data][training_links][stream]") {
  TempDir dir;
  const Files files = aligned_corpus(dir, 500);
  data::StreamOptions options = small_windows();
  if (GENERATE(false, true)) options.concat = {0.5, 3};
  const std::vector<data::CorpusFiles> corpora{{files.src, files.tgt, 1.0, files.links}};
  auto take = [](data::TrainingStream& stream, int count) {
    std::vector<std::vector<data::PieceLinks>> links;
    for (int i = 0; i < count; ++i) links.push_back(stream.next().links);
    return links;
  };
  data::TrainingStream uninterrupted(corpora, vocab(), vocab(), options);
  const auto expected = take(uninterrupted, 50);
  int64_t rows_with_links = 0;
  for (const auto& batch : expected)
    for (const data::PieceLinks& row : batch) rows_with_links += row.empty() ? 0 : 1;
  CHECK(rows_with_links > 100);

  data::TrainingStream first(corpora, vocab(), vocab(), options);
  take(first, 23);
  data::TrainingStream resumed(corpora, vocab(), vocab(), options);
  resumed.set_position(first.position());
  CHECK(resumed.position().start[0].reader.links_offset > 0);
  const auto rest = take(resumed, 27);
  CHECK(std::equal(rest.begin(), rest.end(), expected.begin() + 23));
}

TEST_CASE("training stream with alignments: a bad line or a short file is one error naming the file and line",
          "[data][training_links][stream]") {
  TempDir dir;
  const Files files = aligned_corpus(dir, 100);
  std::istringstream in([&] {
    std::ifstream file(files.links);
    return std::string(std::istreambuf_iterator<char>(file), {});
  }());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  auto first_error = [&](const std::vector<std::string>& written) {
    std::string text;
    for (const std::string& line : written) text += line + "\n";
    write_file(files.links, text);
    data::TrainingStream stream({{files.src, files.tgt, 1.0, files.links}}, vocab(), vocab(), small_windows());
    return error_of([&] {
      for (int i = 0; i < 100; ++i) stream.next();
    });
  };
  std::vector<std::string> bad = lines;
  bad[6] = "0-0 1:1";
  CHECK(first_error(bad) == "encoding the training corpus: " + files.links +
                                " line 7: \"1:1\" is not a link \"i-j\" (source and target positions from 0)");
  bad = lines;
  bad[3] = "0-0 99-0";
  CHECK_THAT(first_error(bad), Catch::StartsWith("encoding the training corpus: " + files.links +
                                                 " line 4: link 99-0 lies beyond the pair ("));
  bad = std::vector<std::string>(lines.begin(), lines.begin() + 4);
  CHECK(first_error(bad) == "the alignments file '" + files.links + "' ends after line 4 but '" + files.src +
                                "' has a line 5; it must align line by line with the corpus");
}

TEST_CASE("a reader given alignments at a position taken without them reads the links of its own pair",
          "[data][training_links]") {
  // A run resumed or fine-tuned with data.train_alignments newly set: its saved position has no
  // offset in the alignments file, and the links must still be line i's for pair i.
  TempDir dir;
  const Files files = aligned_corpus(dir, 20);
  data::PairReader plain(files.src, files.tgt);
  std::string src, tgt, links;
  for (int i = 0; i < 7; ++i) REQUIRE(plain.next(src, tgt));
  REQUIRE(plain.position().links_offset == 0);

  data::PairReader everything(files.src, files.tgt, {}, files.links);
  std::vector<std::string> expected_links;
  while (everything.next(src, tgt, &links)) expected_links.push_back(links);
  data::PairReader resumed(files.src, files.tgt, plain.position(), files.links);
  for (size_t line = 7; line < expected_links.size(); ++line) {
    REQUIRE(resumed.next(src, tgt, &links));
    CHECK(links == expected_links[line]);
  }
  CHECK_FALSE(resumed.next(src, tgt, &links));

  // Fewer alignment lines than the position has passed: one error naming both files.
  write_file(files.links, "0-0\n0-0\n");
  CHECK(error_of([&] { data::PairReader short_links(files.src, files.tgt, plain.position(), files.links); }) ==
        "the alignments file '" + files.links + "' ends after line 2 but '" + files.src +
            "' has 7 lines before the position the run resumes at; it must align line by line with the corpus");
}
