#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "io/safetensors.h"
#include "temp_dir.h"

using namespace attn;
using attn::testing::TempDir;
using io::ElementType;

namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string length_prefix(uint64_t length) {
  std::string prefix(8, '\0');
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<char>(length >> (8 * i));
  return prefix;
}

// A file with a given header text and `data_bytes` bytes of data.
std::string raw_file(const std::string& header, size_t data_bytes) {
  return length_prefix(header.size()) + header + std::string(data_bytes, '\x01');
}

// Reading `bytes` as a file must fail with one line naming the file and containing `expected`.
void check_rejected(const TempDir& dir, const std::string& bytes, const std::string& expected) {
  const std::string path = dir.file("hostile.safetensors");
  write_bytes(path, bytes);
  try {
    io::read_safetensors(path);
    FAIL("accepted a file that should fail with: " << expected);
  } catch (const Error& error) {
    const std::string message = error.what();
    INFO(message);
    CHECK_THAT(message, Catch::Contains(path) && Catch::Contains(expected));
    CHECK(message.find('\n') == std::string::npos);
  }
}

}  // namespace

TEST_CASE("safetensors round-trips tensors and bytes and metadata", "[io][safetensors]") {
  TempDir dir;
  const std::string path = dir.file("t.safetensors");
  std::vector<float> weights = {1.f, -2.5f, 3.25f, 0.f, 1e-30f, -7.f};
  std::vector<uint16_t> half = {0x3f80, 0xc000, 0x7fc0};
  std::vector<int64_t> ids = {-1, 0, 1LL << 40};
  std::vector<io::TensorEntry> entries = {
      {"layer.weight", ElementType::f32, {2, 3}, weights.data(), weights.size() * 4},
      {"layer.half", ElementType::bf16, {3}, half.data(), half.size() * 2},
      {"ids", ElementType::i64, {3, 1}, ids.data(), ids.size() * 8},
      {"empty", ElementType::f32, {0, 4}, nullptr, 0},
  };
  std::map<std::string, std::string> metadata = {{"format", "attn"}, {"config", "{\"a\": [1, 2]}"}};
  io::write_safetensors(path, entries, metadata);
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));

  // The layout any safetensors reader expects: length prefix, JSON header, data.
  const std::string bytes = read_bytes(path);
  uint64_t header_length = 0;
  for (int i = 7; i >= 0; --i) header_length = (header_length << 8) | static_cast<unsigned char>(bytes[i]);
  CHECK(header_length % 8 == 0);
  auto header = nlohmann::json::parse(bytes.substr(8, header_length));
  CHECK(header["layer.weight"]["dtype"] == "F32");
  CHECK(header["__metadata__"]["config"] == "{\"a\": [1, 2]}");
  CHECK(bytes.size() == 8 + header_length + 24 + 6 + 24);

  io::SafetensorsFile file = io::read_safetensors(path);
  CHECK(file.metadata == metadata);
  REQUIRE(file.tensors.size() == entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const io::StoredTensor& stored = file.tensors[i];  // in data order == write order
    CHECK(stored.name == entries[i].name);
    CHECK(stored.dtype == entries[i].dtype);
    CHECK(stored.shape == entries[i].shape);
    REQUIRE(stored.bytes.size() == entries[i].bytes);
    CHECK((entries[i].bytes == 0 || std::memcmp(stored.bytes.data(), entries[i].data, entries[i].bytes) == 0));
  }
  CHECK(file.find("ids") != nullptr);
  CHECK(file.find("nope") == nullptr);
}

TEST_CASE("a tensor's byte count must match its shape when writing", "[io][safetensors]") {
  TempDir dir;
  std::vector<float> values(5);
  const std::string path = dir.file("bad.safetensors");
  CHECK_THROWS_WITH(io::write_safetensors(path, {{"w", ElementType::f32, {2, 3}, values.data(), 20}}),
                    Catch::Contains(path) && Catch::Contains("\"w\"") && Catch::Contains("24"));
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_CASE("hostile or broken safetensors files are clear errors and never crash", "[io][safetensors]") {
  TempDir dir;
  const std::string good_header = R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  SECTION("empty and truncated files") {
    check_rejected(dir, "", "too small");
    check_rejected(dir, "\x10\0\0", "too small");
    std::string truncated = raw_file(good_header, 16);
    check_rejected(dir, truncated.substr(0, truncated.size() - 1), "outside the data");
    check_rejected(dir, truncated.substr(0, 20), "runs past the end");
  }
  SECTION("a header length that lies") {
    check_rejected(dir, length_prefix(1ull << 40) + good_header, "runs past the end");
    check_rejected(dir, length_prefix(~0ull) + good_header, "runs past the end");
    check_rejected(dir, length_prefix(10) + good_header + std::string(16, '\0'), "not valid JSON");
  }
  SECTION("headers that are not JSON objects") {
    check_rejected(dir, raw_file("hello, world", 0), "not valid JSON");
    check_rejected(dir, raw_file("[1, 2]", 0), "not a JSON object");
    // Deep nesting stops at the parser: error messages dump() values, which recurses.
    check_rejected(dir, raw_file(std::string(200000, '[') + std::string(200000, ']'), 0),
                   "JSON nested deeper than 64 levels");
    check_rejected(dir,
                   raw_file(R"({"w":{"dtype":"F32","shape":)" + std::string(100000, '[') + std::string(100000, ']') +
                                R"(,"data_offsets":[0,0]}})",
                            0),
                   "JSON nested deeper than 64 levels");
    check_rejected(dir, raw_file("{\"w\": 3}", 0), "\"w\" is not a JSON object");
  }
  SECTION("entries that lie about their data") {
    check_rejected(dir, raw_file(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,1000]}})", 16),
                   "\"w\" data_offsets [0, 1000] lie outside the data (16 bytes)");
    check_rejected(dir, raw_file(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[12,4]}})", 16),
                   "\"w\" data_offsets");
    check_rejected(dir, raw_file(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,16]}})", 16),
                   "\"w\" has 16 bytes but shape (2, 3) of F32 needs 24");
    check_rejected(dir, raw_file(R"({"w":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,16]}})", 16),
                   "more than 2^64");
    check_rejected(dir,
                   raw_file(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                            16),
                   "overlap");
  }
  SECTION("malformed fields") {
    check_rejected(dir, raw_file(R"({"w":{"dtype":"F33","shape":[2,2],"data_offsets":[0,16]}})", 16),
                   "\"w\" has an unknown dtype \"F33\"");
    check_rejected(dir, raw_file(R"({"w":{"dtype":7,"shape":[2,2],"data_offsets":[0,16]}})", 16), "\"dtype\"");
    check_rejected(dir, raw_file(R"({"w":{"dtype":"F32","shape":[2,-2],"data_offsets":[0,16]}})", 16),
                   "\"w\" shape holds -2");
    check_rejected(dir, raw_file(R"({"w":{"dtype":"F32","shape":[2,2.5],"data_offsets":[0,16]}})", 16),
                   "shape holds 2.5");
    check_rejected(dir, raw_file(R"({"w":{"dtype":"F32","shape":"2x2","data_offsets":[0,16]}})", 16),
                   "shape is not an array");
    check_rejected(dir, raw_file(R"({"w":{"dtype":"F32","shape":[2,2]}})", 16), "no field \"data_offsets\"");
    check_rejected(dir, raw_file(R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,8,16]}})", 16),
                   "not [begin, end]");
    check_rejected(dir, raw_file(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16],"x":1}})", 16),
                   "unknown field \"x\"");
    check_rejected(dir, raw_file(R"({"__metadata__":{"k":1}})", 0), "\"k\" is not a string");
    check_rejected(dir, raw_file(R"({"__metadata__":[]})", 0), "__metadata__ is not a JSON object");
    check_rejected(dir, raw_file("{\"a\\nb\":{\"dtype\":\"X\",\"shape\":[],\"data_offsets\":[0,0]}}", 0),
                   "\"a\\nb\" has an unknown dtype");
  }
}

TEST_CASE("reading a missing file or a directory names the path", "[io][safetensors]") {
  TempDir dir;
  const std::string missing = dir.file("missing.safetensors");
  CHECK_THROWS_WITH(io::read_safetensors(missing), Catch::Contains(missing) && Catch::Contains("cannot open"));
  CHECK_THROWS_WITH(io::read_safetensors(dir.path().string()), Catch::Contains("not a regular file"));
}

TEST_CASE("a failed write leaves the existing file untouched and no temporary behind", "[io][safetensors]") {
  TempDir dir;
  const std::string path = dir.file("model.safetensors");
  std::vector<float> old_values = {1.f, 2.f};
  std::vector<float> new_values = {3.f, 4.f};
  io::write_safetensors(path, {{"w", ElementType::f32, {2}, old_values.data(), 8}});
  const std::string before = read_bytes(path);
  const std::vector<io::TensorEntry> update = {{"w", ElementType::f32, {2}, new_values.data(), 8}};

  SECTION("the temporary file cannot be created") {
    std::filesystem::create_directory(path + ".tmp");  // blocks the temporary file, even for root
    CHECK_THROWS_WITH(io::write_safetensors(path, update), Catch::Contains(path) && Catch::Contains("Is a directory"));
    CHECK(read_bytes(path) == before);
    CHECK(std::filesystem::is_directory(path + ".tmp"));
  }
  SECTION("the directory is not writable") {
    if (geteuid() == 0) {
      WARN("running as root: permissions do not stop writes, so this section only checks a missing directory");
    } else {
      std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
      CHECK_THROWS_WITH(io::write_safetensors(path, update),
                        Catch::Contains(path) && Catch::Contains("Permission denied"));
      std::filesystem::permissions(dir.path(), std::filesystem::perms::owner_all);
      CHECK(read_bytes(path) == before);
      CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
    }
  }
  SECTION("the directory does not exist") {
    const std::string nowhere = dir.file("no-such-dir/model.safetensors");
    CHECK_THROWS_WITH(io::write_safetensors(nowhere, update),
                      Catch::Contains(nowhere) && Catch::Contains("No such file or directory"));
  }
  SECTION("a successful overwrite replaces the file") {
    io::write_safetensors(path, update);
    CHECK(read_bytes(path) != before);
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
    auto file = io::read_safetensors(path);
    REQUIRE(file.tensors.size() == 1);
    CHECK(std::memcmp(file.tensors[0].bytes.data(), new_values.data(), 8) == 0);
  }
}
