// --reverse-model of attn-dump-attention and attn-translate: the word links of a run trained
// the other way (target -> source), transposed and symmetrised with the forward run's. Two tiny
// runs, one per direction; the reverse run's own links come from a plain dump on the swapped
// files, so union and intersection can be checked exactly.
#include <algorithm>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "apps/app_fixtures.h"

using namespace attn::testing;

namespace {

using LinkSet = std::set<std::pair<int64_t, int64_t>>;  // (source word, target word)

LinkSet parse_links(const std::string& line, bool transpose = false) {
  LinkSet links;
  std::istringstream in(line);
  for (std::string link; in >> link;) {
    const int64_t i = std::stoll(link.substr(0, link.find('-'))), j = std::stoll(link.substr(link.find('-') + 1));
    links.insert(transpose ? std::make_pair(j, i) : std::make_pair(i, j));
  }
  return links;
}

std::vector<LinkSet> dump_links(const TempDir& dir, const std::string& args, bool transpose = false) {
  Result result = run_program(dir, "attn-dump-attention", args);
  INFO("attn-dump-attention " << args << "\nstderr:\n" << result.err);
  REQUIRE(result.exit_code == 0);
  std::vector<LinkSet> lines;
  for (const std::string& line : split_lines(result.out)) lines.push_back(parse_links(line, transpose));
  return lines;
}

}  // namespace

TEST_CASE("a reverse model symmetrises the forward links with its own transposed links", "[cli][align]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir);
  const std::string swapped = " --set data.train_src=" + quoted(dir.file("train.tgt")) +
                              " --set data.train_tgt=" + quoted(dir.file("train.src")) +
                              " --set data.valid_src=" + quoted(dir.file("valid.tgt")) +
                              " --set data.valid_tgt=" + quoted(dir.file("valid.src"));
  // The reverse run keeps its step-5 checkpoint too, for --reverse-checkpoint.
  const std::string reverse_keeps = " --set train.save_every=5 --set train.keep_checkpoints=4";
  for (const std::string& extra :
       {std::string(), " --set output_dir=" + quoted(dir.file("run-rev")) + swapped + reverse_keeps}) {
    Result trained = run_program(dir, "attn-train", "--config " + quoted(config) + " --set train.max_steps=20" + extra);
    INFO("attn-train" << extra << "\nstderr:\n" << trained.err);
    REQUIRE(trained.exit_code == 0);
  }
  const std::vector<std::string> src = split_lines(read_text(dir.file("valid.src")));
  const std::vector<std::string> tgt = split_lines(read_text(dir.file("valid.tgt")));
  write_lines(dir.file("s.txt"), {src[0], src[1], "", src[2]});
  write_lines(dir.file("t.txt"), {tgt[0], tgt[1], "", tgt[2]});
  const std::string forward = "--model " + quoted(dir.file("run")), reverse_run = quoted(dir.file("run-rev"));
  const std::string files = " --src " + quoted(dir.file("s.txt")) + " --tgt " + quoted(dir.file("t.txt"));

  const std::vector<LinkSet> own = dump_links(dir, forward + files + " --alignments");
  const std::vector<LinkSet> reverse = dump_links(dir,
                                                  "--model " + reverse_run + " --src " + quoted(dir.file("t.txt")) +
                                                      " --tgt " + quoted(dir.file("s.txt")) + " --alignments",
                                                  true);
  auto symmetrised = [&](const std::string& how) {
    return dump_links(dir, forward + files + " --alignments --reverse-model " + reverse_run + " --symmetrize " + how);
  };
  const std::vector<LinkSet> both = symmetrised("union"), common = symmetrised("intersection"),
                             grown = symmetrised("grow-diag-final-and");
  REQUIRE(own.size() == 4);
  REQUIRE(reverse.size() == 4);
  REQUIRE(both.size() == 4);
  REQUIRE(common.size() == 4);
  REQUIRE(grown.size() == 4);
  CHECK(both[2].empty());  // the empty line keeps its line
  size_t reverse_only = 0;
  for (size_t i = 0; i < own.size(); ++i) {
    INFO("line " << i);
    LinkSet expected_union = own[i], expected_common;
    expected_union.insert(reverse[i].begin(), reverse[i].end());
    std::set_intersection(own[i].begin(), own[i].end(), reverse[i].begin(), reverse[i].end(),
                          std::inserter(expected_common, expected_common.begin()));
    CHECK(both[i] == expected_union);
    CHECK(common[i] == expected_common);
    CHECK(std::includes(grown[i].begin(), grown[i].end(), common[i].begin(), common[i].end()));
    CHECK(std::includes(both[i].begin(), both[i].end(), grown[i].begin(), grown[i].end()));
    reverse_only += expected_union.size() - own[i].size();
  }
  CHECK(reverse_only > 0);  // the reverse run added links of its own: the two really were combined

  // --reverse-checkpoint: the reverse run's links come from the file named, not its default.
  const std::string early = quoted(dir.file("run-rev/checkpoint.step-5.safetensors"));
  const std::vector<LinkSet> reverse_early =
      dump_links(dir,
                 "--model " + reverse_run + " --checkpoint " + early + " --src " + quoted(dir.file("t.txt")) +
                     " --tgt " + quoted(dir.file("s.txt")) + " --alignments",
                 true);
  REQUIRE(reverse_early != reverse);  // step 5 aligns otherwise than the default: the flag is observable
  const std::vector<LinkSet> both_early =
      dump_links(dir, forward + files + " --alignments --reverse-model " + reverse_run + " --reverse-checkpoint " +
                          early + " --symmetrize union");
  REQUIRE(both_early.size() == 4);
  for (size_t i = 0; i < own.size(); ++i) {
    LinkSet expected_union = own[i];
    expected_union.insert(reverse_early[i].begin(), reverse_early[i].end());
    CHECK(both_early[i] == expected_union);
  }
  check_refused(run_program(dir, "attn-dump-attention",
                            forward + files + " --alignments --reverse-model " + reverse_run +
                                " --reverse-checkpoint " + quoted(dir.file("run-rev/no-such.safetensors"))),
                "--reverse-checkpoint ");
  check_refused(
      run_program(dir, "attn-dump-attention", forward + files + " --alignments --reverse-checkpoint " + early),
      "--reverse-checkpoint requires --reverse-model");

  // attn-translate: its own translation's links, symmetrised with the reverse run reading the
  // translation's text as its source. The same text dumped by the reverse run gives R exactly.
  auto translate = [&](const std::string& extra) {
    Result translated = run_program(
        dir, "attn-translate", forward + " --input " + quoted(dir.file("s.txt")) + " --alignments --quiet" + extra);
    INFO("attn-translate" << extra << " stderr:\n" << translated.err);
    REQUIRE(translated.exit_code == 0);
    std::vector<std::pair<std::string, LinkSet>> lines;
    for (const std::string& line : split_lines(translated.out)) {
      const size_t bar = line.find(" ||| ");
      REQUIRE(bar != std::string::npos);
      lines.emplace_back(line.substr(0, bar), parse_links(line.substr(bar + 5)));
    }
    REQUIRE(lines.size() == 4);
    return lines;
  };
  const auto plain = translate("");
  const auto unioned = translate(" --reverse-model " + reverse_run + " --symmetrize union");
  const auto intersected = translate(" --reverse-model " + reverse_run + " --symmetrize intersection");
  std::vector<std::string> texts;
  for (const auto& [text, links] : plain) texts.push_back(text);
  write_lines(dir.file("hyp.txt"), texts);
  const std::vector<LinkSet> translated_reverse =
      dump_links(dir,
                 "--model " + reverse_run + " --src " + quoted(dir.file("hyp.txt")) + " --tgt " +
                     quoted(dir.file("s.txt")) + " --alignments",
                 true);
  for (size_t i = 0; i < plain.size(); ++i) {
    INFO("translated line " << i);
    CHECK(unioned[i].first == plain[i].first);
    LinkSet expected = plain[i].second;
    expected.insert(translated_reverse[i].begin(), translated_reverse[i].end());
    CHECK(unioned[i].second == expected);
    CHECK(std::includes(plain[i].second.begin(), plain[i].second.end(), intersected[i].second.begin(),
                        intersected[i].second.end()));
  }

  check_refused(
      run_program(dir, "attn-dump-attention", forward + files + " --alignments pieces --reverse-model " + reverse_run),
      "--alignments pieces");
  check_refused(run_program(dir, "attn-dump-attention", forward + files + " --reverse-model " + reverse_run),
                "--reverse-model requires --alignments");
  // A reverse run that does not load fails before any output is opened: --out keeps its text.
  write_lines(dir.file("kept.align"), {"0-0"});
  check_refused(run_program(dir, "attn-dump-attention",
                            forward + files + " --alignments --reverse-model " + quoted(dir.file("no-such-run")) +
                                " --out " + quoted(dir.file("kept.align"))),
                "--reverse-model: ");
  CHECK(read_text(dir.file("kept.align")) == "0-0\n");
  check_refused(run_program(dir, "attn-translate",
                            forward + " --input " + quoted(dir.file("s.txt")) + " --alignments --reverse-model " +
                                quoted(dir.file("no-such-run")) + " --output " + quoted(dir.file("kept.align"))),
                "--reverse-model: ");
  CHECK(read_text(dir.file("kept.align")) == "0-0\n");
}
