// CRC32C and SHA-256 against published test vectors, and the SSE4.2 CRC32C against the
// table-driven one on every length and alignment.
#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "core/check.h"
#include "data/data_fixtures.h"
#include "io/checksum.h"

using namespace attn;
using attn::testing::TempDir;

namespace {

// 0, 1, ..., count-1 (or the reverse).
std::vector<unsigned char> counting_bytes(int count, bool descending = false) {
  std::vector<unsigned char> bytes(count);
  for (int i = 0; i < count; ++i) bytes[i] = static_cast<unsigned char>(descending ? count - 1 - i : i);
  return bytes;
}

}  // namespace

TEST_CASE("crc32c gives the known answers (the check value and RFC 3720's vectors)", "[io][checksum]") {
  const std::vector<unsigned char> zeros(32, 0x00), ones(32, 0xff);
  const std::vector<unsigned char> ascending = counting_bytes(32), descending = counting_bytes(32, true);
  for (auto crc : {&io::crc32c, &io::crc32c_portable}) {
    CHECK(crc("123456789", 9, 0) == 0xe3069283u);
    CHECK(crc(zeros.data(), zeros.size(), 0) == 0x8a9136aau);
    CHECK(crc(ones.data(), ones.size(), 0) == 0x62a8ab43u);
    CHECK(crc(ascending.data(), ascending.size(), 0) == 0x46dd794eu);
    CHECK(crc(descending.data(), descending.size(), 0) == 0x113fdb5cu);
    CHECK(crc("", 0, 0) == 0u);
  }
  CHECK(io::crc32c_hex(0xe3069283u) == "e3069283");
  CHECK(io::crc32c_hex(0x0000abcdu) == "0000abcd");
}

TEST_CASE("crc32c continues across pieces - and both versions agree at every length and alignment", "[io][checksum]") {
  std::mt19937 random(7);
  std::vector<unsigned char> data(4096 + 16);
  for (auto& byte : data) byte = static_cast<unsigned char>(random());
  const uint32_t whole = io::crc32c(data.data(), 4096);
  for (size_t split : {size_t(0), size_t(1), size_t(7), size_t(8), size_t(1000), size_t(4095), size_t(4096)})
    CHECK(io::crc32c(data.data() + split, 4096 - split, io::crc32c(data.data(), split)) == whole);
  for (size_t offset = 0; offset < 16; ++offset)
    for (size_t length = 0; length < 80; ++length) {
      INFO("offset " << offset << ", length " << length);
      REQUIRE(io::crc32c(data.data() + offset, length, 0x1234) ==
              io::crc32c_portable(data.data() + offset, length, 0x1234));
    }
}

TEST_CASE("sha256 gives FIPS 180-4's known answers - fed whole or in pieces", "[io][checksum]") {
  CHECK(io::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(io::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  CHECK(io::sha256_hex(two_blocks) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(io::sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopq"
                       "rsmnopqrstnopqrstu") == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  const std::string million(1000000, 'a');
  CHECK(io::sha256_hex(million) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  io::Sha256 pieces;
  for (size_t at = 0, step = 1; at < million.size(); at += step, step = step * 3 % 1000 + 1)
    pieces.update(million.data() + at, std::min(step, million.size() - at));
  CHECK(pieces.hex_digest() == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256_of_file hashes the content - and names a file it cannot read", "[io][checksum]") {
  TempDir dir;
  testing::write_file(dir.file("abc.txt"), "abc");
  CHECK(io::sha256_of_file(dir.file("abc.txt")) == io::sha256_hex("abc"));
  CHECK_THROWS_WITH(io::sha256_of_file(dir.file("missing")), Catch::Contains(dir.file("missing")));
}
