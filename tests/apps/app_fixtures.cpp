#include "apps/app_fixtures.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <poll.h>
#include <random>
#include <spawn.h>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "tiny_config.h"
#include "wait_until.h"

extern char** environ;

namespace attn::testing {

using nlohmann::json;

const std::string kApps = ATTN_BINARY_DIR "/apps/";

std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

void write_lines(const std::string& path, const std::vector<std::string>& lines) {
  std::ofstream file(path, std::ios::binary);
  for (const auto& line : lines) file << line << '\n';
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

std::string quoted(const std::string& path) { return "'" + path + "'"; }

namespace {

Result run_with(const TempDir& dir, const std::string& program, const std::string& arguments, const std::string& input,
                const std::string& prefix, const std::string& out) {
  const std::string err = dir.file("stderr.txt");
  const std::string command = prefix + " " + quoted(kApps + program) + " " + arguments + " < " + quoted(input) + " > " +
                              quoted(out) + " 2> " + quoted(err);
  int status = std::system(command.c_str());
  Result result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_text(err);
  return result;
}

}  // namespace

void check_refused(const Result& result, const std::string& what) {
  INFO("stderr:\n" << result.err);
  CHECK(result.exit_code > 0);
  CHECK(result.out.empty());
  CHECK(split_lines(result.err).size() == 1);
  CHECK_THAT(result.err, Catch::Contains(what));
}

Result run_program(const TempDir& dir, const std::string& program, const std::string& arguments,
                   const std::string& input, const std::string& prefix) {
  Result result = run_with(dir, program, arguments, input, prefix, dir.file("stdout.txt"));
  result.out = read_text(dir.file("stdout.txt"));
  return result;
}

Result run_to(const TempDir& dir, const std::string& output, const std::string& program, const std::string& arguments,
              const std::string& input) {
  return run_with(dir, program, arguments, input, "", output);
}

pid_t spawn(const TempDir& dir, const std::string& program, const std::vector<std::string>& arguments) {
  std::vector<std::string> words = {kApps + program};
  words.insert(words.end(), arguments.begin(), arguments.end());
  return spawn_command(dir, words);
}

pid_t spawn_command(const TempDir& dir, std::vector<std::string> words) {
  const std::string path = words.at(0);
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, dir.file("child.out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, dir.file("child.err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = -1;
  int failed = posix_spawnp(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (failed) throw std::runtime_error("cannot start " + path);
  return pid;
}

namespace {

// The peak resident memory of a running process's own address space (VmHWM), 0 when it has
// none left. wait4's ru_maxrss would not do: Linux carries the spawning process's peak into
// a child started with vfork, as posix_spawn does.
int64_t peak_rss_kb_of(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  return 0;
}

}  // namespace

int wait_for(pid_t pid, int64_t* peak_rss_kb) {
  int status = 0;
  if (peak_rss_kb) {  // sample the peak until the child has exited (it only grows)
    *peak_rss_kb = 0;
    while (true) {
      *peak_rss_kb = std::max(*peak_rss_kb, peak_rss_kb_of(pid));
      const pid_t done = waitpid(pid, &status, WNOHANG);
      if (done == pid) break;
      if (done < 0 && errno != EINTR) return -1000;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  } else {
    while (waitpid(pid, &status, 0) < 0)
      if (errno != EINTR) return -1000;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

bool wait_for_file(const std::string& path, double seconds) {
  return wait_until([&] { return std::filesystem::exists(path); }, seconds);
}

PipedChild::PipedChild(const TempDir& dir, const std::string& program, const std::vector<std::string>& arguments,
                       const std::string& stderr_path) {
  std::signal(SIGPIPE, SIG_IGN);  // a child that died must fail the test, not kill it
  int input[2], output[2];
  if (pipe2(input, O_CLOEXEC) != 0 || pipe2(output, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  std::vector<std::string> words = {kApps + program};
  words.insert(words.end(), arguments.begin(), arguments.end());
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, input[0], 0);  // dup2 clears O_CLOEXEC
  posix_spawn_file_actions_adddup2(&actions, output[1], 1);
  const std::string err = stderr_path.empty() ? dir.file("child.err") : stderr_path;
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY, 0644);
  int failed = posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(input[0]);
  ::close(output[1]);
  in_ = input[1];
  out_ = output[0];
  if (failed) throw std::runtime_error("cannot start " + words[0]);
}

PipedChild::~PipedChild() {
  // Its output is closed first: a child blocked on writing to a pipe nobody reads then ends.
  if (out_ >= 0) ::close(out_);
  if (pid_ > 0) wait();
}

void PipedChild::write(const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(in_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error("cannot write to the child's input");
    done += size_t(n);
  }
}

void PipedChild::close_input() {
  if (in_ >= 0) ::close(in_);
  in_ = -1;
}

std::optional<std::string> PipedChild::read_line(double seconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    size_t newline = pending_.find('\n');
    if (newline != std::string::npos) {
      std::string line = pending_.substr(0, newline);
      pending_.erase(0, newline + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd descriptor{out_, POLLIN, 0};
    int ready = ::poll(&descriptor, 1, int(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return std::nullopt;
    char buffer[4096];
    ssize_t n = ::read(out_, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;  // its output ended
    pending_.append(buffer, size_t(n));
  }
}

int PipedChild::wait() {
  close_input();
  int code = wait_for(pid_);
  pid_ = -1;
  return code;
}

Corpus synthetic_corpus(int sentences, uint32_t seed) {
  const std::vector<std::string> onsets = {"k", "t", "r", "m", "s", "l", "p", "n", "d", "v"};
  const std::vector<std::string> vowels = {"a", "o", "i"};
  std::vector<std::string> source_words, target_words;
  for (const auto& onset : onsets)
    for (const auto& vowel : vowels) {
      source_words.push_back(onset + vowel + "n");
      target_words.push_back(vowel + onset + "e");
    }
  std::mt19937 random(seed);
  Corpus corpus;
  for (int i = 0; i < sentences; ++i) {
    std::vector<uint32_t> words(3 + random() % 5);
    for (auto& word : words) word = random() % source_words.size();
    std::string src, tgt;
    for (size_t w = 0; w < words.size(); ++w) {
      src += (w ? " " : "") + source_words[words[w]];
      tgt += (w ? " " : "") + target_words[words[words.size() - 1 - w]];
    }
    corpus.src.push_back(src);
    corpus.tgt.push_back(tgt);
  }
  return corpus;
}

std::string write_tiny_setup(const TempDir& dir, const json& train, const std::string& model_type) {
  Corpus train_text = synthetic_corpus(200, 1), valid = synthetic_corpus(20, 2);
  write_lines(dir.file("train.src"), train_text.src);
  write_lines(dir.file("train.tgt"), train_text.tgt);
  write_lines(dir.file("valid.src"), valid.src);
  write_lines(dir.file("valid.tgt"), valid.tgt);
  json config = tiny_config(dir, model_type);
  config["train"].update({{"batch_tokens", 256},
                          {"max_steps", 40},
                          {"valid_every", 20},
                          {"save_every", 20},
                          {"log_every", 10},
                          {"learning_rate", 0.01},
                          {"warmup_steps", 10}});
  config["decode"] = {{"beam", 1}, {"batch_size", 3}};
  config["train"].update(train);
  std::ofstream(dir.file("config.json")) << config.dump(2) << '\n';
  return dir.file("config.json");
}

std::vector<int64_t> logged_steps(const std::string& log_path, const std::string& type) {
  std::vector<int64_t> steps;
  for (const auto& line : split_lines(read_text(log_path))) {
    json record = json::parse(line);
    if (record.at("type") == type) steps.push_back(record.at("step").get<int64_t>());
  }
  return steps;
}

}  // namespace attn::testing
