// The programs' shared text input and output (apps/text_io.h): a file output appears complete
// or not at all.
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "temp_dir.h"
#include "text_io.h"

using attn::apps::TextInput;
using attn::apps::TextOutput;
using attn::testing::TempDir;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

}  // namespace

TEST_CASE("a TextOutput file holds nothing at its path until finish - then every byte in order", "[apps][text_io]") {
  TempDir dir;
  const std::string path = dir.file("out.txt");
  TextOutput output(path, "the test's text");
  std::string expected;
  for (int i = 0; i < 20000; ++i) {  // several of the stream's buffers
    const std::string piece = "line " + std::to_string(i) + "\n";
    if (i % 2) {
      output.write(piece);
    } else {
      output.stream() << piece;
    }
    expected += piece;
  }
  CHECK_FALSE(std::filesystem::exists(path));
  output.write("the last piece\n");  // write() hands a piece on at once: all of it is in the temporary
  expected += "the last piece\n";
  CHECK(read_file(path + ".tmp") == expected);
  output.finish();
  CHECK(read_file(path) == expected);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_CASE("a TextOutput given up before finish leaves the old file as it was and no temporary", "[apps][text_io]") {
  TempDir dir;
  const std::string path = dir.file("out.txt");
  write_file(path, "the old output\n");
  {
    TextOutput output(path, "the test's text");
    output.write("half of the new output\n");
    output.stream() << std::string(100000, 'x');  // some of it handed to the file already
  }
  CHECK(read_file(path) == "the old output\n");
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_CASE("a TextOutput or TextInput that cannot open its file fails at once naming it", "[apps][text_io]") {
  TempDir dir;
  const std::string missing = dir.file("no-such-dir/out.txt");
  CHECK_THROWS_WITH(TextOutput(missing, "the test's text"), Catch::Contains(missing));
  CHECK_THROWS_WITH(TextInput(dir.file("absent.txt")), Catch::Contains("cannot open '" + dir.file("absent.txt") + "'"));
  CHECK(TextInput("").name() == "standard input");
}
