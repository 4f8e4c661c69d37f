#pragma once
// Shared by the tests that run the programs (test_cli.cpp, test_faults.cpp): running a program
// with its output in files, a tiny synthetic corpus, and a tiny Transformer config for it.
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "temp_dir.h"

namespace attn::testing {

extern const std::string kApps;  // the build's apps/ directory, with a trailing slash

struct Result {
  int exit_code = -1;
  std::string out, err;
};

std::string read_text(const std::string& path);
void write_lines(const std::string& path, const std::vector<std::string>& lines);
std::vector<std::string> split_lines(const std::string& text);
std::string quoted(const std::string& path);

// Runs `program arguments` through the shell with stdin from `input` (or nothing); `prefix`
// is shell code run first, in the same shell (e.g. "ulimit -f 16;"), or a launcher that runs
// the program (e.g. "mpirun -np 2").
Result run_program(const TempDir& dir, const std::string& program, const std::string& arguments,
                   const std::string& input = "/dev/null", const std::string& prefix = "");
// The same with standard output sent to `output` (e.g. "/dev/full"); Result::out stays empty.
Result run_to(const TempDir& dir, const std::string& output, const std::string& program, const std::string& arguments,
              const std::string& input = "/dev/null");

// A failed run: non-zero exit (not a crash), nothing on stdout, one error line that says `what`.
void check_refused(const Result& result, const std::string& what);

// Starts `program arguments...` without waiting (stdout and stderr to dir's child.out and
// child.err); returns its process id.
pid_t spawn(const TempDir& dir, const std::string& program, const std::vector<std::string>& arguments);
// The same for any command line (words[0] is looked up in PATH), e.g. {"mpirun", ...}.
pid_t spawn_command(const TempDir& dir, std::vector<std::string> words);
// Waits for `pid`; returns its exit code, or -signal when a signal ended it. `peak_rss_kb`,
// when given, receives the child's peak resident memory (sampled every few milliseconds).
int wait_for(pid_t pid, int64_t* peak_rss_kb = nullptr);
// Polls until `path` exists or `seconds` pass; returns whether it exists.
bool wait_for_file(const std::string& path, double seconds);

// A program talking through pipes, for streaming tests: the test writes its standard input
// and reads its standard output as it runs. Its stderr goes to `stderr_path` (a file, or a
// terminal such as a pseudo-terminal's slave), by default dir's child.err.
class PipedChild {
 public:
  PipedChild(const TempDir& dir, const std::string& program, const std::vector<std::string>& arguments,
             const std::string& stderr_path = "");
  ~PipedChild();  // closes the pipes and waits for the child
  PipedChild(const PipedChild&) = delete;
  PipedChild& operator=(const PipedChild&) = delete;

  void write(const std::string& text);  // to its standard input
  void close_input();                   // end of its input
  // The next line of its output (without "\n"), or nothing when none comes within `seconds`
  // or its output ends.
  std::optional<std::string> read_line(double seconds);
  int wait();  // closes its input; its exit code, or -signal
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1;
  std::string pending_;  // output read but not yet returned
};

// A made-up language pair: 30 source words, 30 target words, each target sentence the
// word-by-word translation of its source in reverse order. Deterministic.
struct Corpus {
  std::vector<std::string> src, tgt;
};
Corpus synthetic_corpus(int sentences, uint32_t seed);

// train.* overrides for a run that only a signal or a kill ends: no step, time or epoch limit
// is near, and it saves every 5 steps.
inline const nlohmann::json kEndless = {
    {"max_steps", 1000000}, {"save_every", 5}, {"valid_every", 1000000}, {"log_every", 5}};

// Writes the corpus and a tiny config of `model_type` ("transformer" or "rnn"; run directory
// dir/run, one thread) into `dir`, with `train` merged into its "train" section; returns the
// config's path.
std::string write_tiny_setup(const TempDir& dir, const nlohmann::json& train = nlohmann::json::object(),
                             const std::string& model_type = "transformer");

// The step of every record of `type` in train.log.jsonl, in file order.
std::vector<int64_t> logged_steps(const std::string& log_path, const std::string& type);

}  // namespace attn::testing
