// LineReader: attn-translate's input, line by line with a time limit on each wait, following
// data::read_lines' rules.
#include <chrono>
#include <fcntl.h>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <catch2/catch.hpp>

#include "data/corpus.h"
#include "io/line_reader.h"
#include "temp_dir.h"

using attn::io::LineReader;
using namespace std::chrono_literals;

namespace {

struct Pipe {
  int read_end = -1, write_end = -1;
  Pipe() { REQUIRE(pipe(&read_end) == 0); }
  ~Pipe() {
    ::close(read_end);
    close_writer();
  }
  void write(const std::string& text) { REQUIRE(::write(write_end, text.data(), text.size()) == ssize_t(text.size())); }
  void close_writer() {
    if (write_end >= 0) ::close(write_end);
    write_end = -1;
  }
};

std::vector<std::string> all_lines(LineReader& reader) {
  std::vector<std::string> lines;
  std::string line;
  while (reader.next(line, -1ms) == LineReader::Status::line) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_CASE("LineReader hands out each complete line - and times out while a line is incomplete", "[io][line_reader]") {
  Pipe pipe;
  LineReader reader(pipe.read_end, "the pipe");
  std::string line;
  pipe.write("one\r\ntw");
  CHECK(reader.next(line, 1000ms) == LineReader::Status::line);
  CHECK(line == "one");
  const auto start = std::chrono::steady_clock::now();
  CHECK(reader.next(line, 30ms) == LineReader::Status::timeout);  // "tw" has no end yet
  CHECK(std::chrono::steady_clock::now() - start >= 25ms);
  CHECK(reader.next(line, 0ms) == LineReader::Status::timeout);
  pipe.write("o\n\nthree");
  CHECK(reader.next(line, 0ms) == LineReader::Status::line);
  CHECK(line == "two");
  CHECK(reader.next(line, 0ms) == LineReader::Status::line);
  CHECK(line.empty());
  pipe.close_writer();
  CHECK(reader.next(line, -1ms) == LineReader::Status::line);  // a last line without "\n" counts
  CHECK(line == "three");
  CHECK(reader.next(line, -1ms) == LineReader::Status::end);
  CHECK(reader.next(line, -1ms) == LineReader::Status::end);
  CHECK(reader.lines_read() == 4);
}

TEST_CASE("LineReader reads a file as read_lines does: any bytes - CRLF - long lines - no made-up last line",
          "[io][line_reader]") {
  attn::testing::TempDir dir;
  const std::string long_line(200000, 'x');  // several read chunks
  const std::string text = std::string("a\0b\n", 4) + "\xff\xfe\r\n" + "\r\r\n" + long_line + "\n" + " \t\n";
  std::ofstream(dir.file("in.txt"), std::ios::binary) << text;
  const int fd = ::open(dir.file("in.txt").c_str(), O_RDONLY);
  REQUIRE(fd >= 0);
  LineReader reader(fd, "in.txt");
  const std::vector<std::string> lines = all_lines(reader);
  ::close(fd);
  CHECK(lines == attn::data::read_lines(dir.file("in.txt")));
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == std::string("a\0b", 3));
  CHECK(lines[2] == "\r");  // only the one "\r" before "\n" is a line end
  CHECK(lines[3] == long_line);
}

TEST_CASE("LineReader names its input in a read error", "[io][line_reader]") {
  attn::testing::TempDir dir;
  const int fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY);
  REQUIRE(fd >= 0);
  LineReader reader(fd, "'a directory'");
  std::string line;
  CHECK_THROWS_WITH(reader.next(line, -1ms), Catch::Contains("error while reading 'a directory'"));
  ::close(fd);
}
