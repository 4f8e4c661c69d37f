#include "io/checksum.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <vector>

#include "core/check.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the CRC32C tables below read 8 bytes little-endian");

namespace attn::io {

namespace {

// ---- CRC32C --------------------------------------------------------------------------------

constexpr uint32_t kCastagnoli = 0x82f63b78;  // the polynomial 0x1edc6f41, bit-reversed

// Slicing-by-8 (Intel's): table k gives the CRC of a byte followed by k zero bytes, so eight
// lookups advance the CRC by 8 bytes at once.
using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables tables{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kCastagnoli : 0);
    tables[0][i] = crc;
  }
  for (size_t k = 1; k < 8; ++k)
    for (uint32_t i = 0; i < 256; ++i) tables[k][i] = (tables[k - 1][i] >> 8) ^ tables[0][tables[k - 1][i] & 0xff];
  return tables;
}

constexpr Tables kTables = make_tables();

// Both versions work on the CRC register: no pre- or post-inversion here.
uint32_t update_portable(uint32_t crc, const unsigned char* p, size_t bytes) {
  for (; bytes >= 8; bytes -= 8, p += 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    v ^= crc;
    crc = kTables[7][v & 0xff] ^ kTables[6][(v >> 8) & 0xff] ^ kTables[5][(v >> 16) & 0xff] ^
          kTables[4][(v >> 24) & 0xff] ^ kTables[3][(v >> 32) & 0xff] ^ kTables[2][(v >> 40) & 0xff] ^
          kTables[1][(v >> 48) & 0xff] ^ kTables[0][v >> 56];
  }
  for (; bytes > 0; --bytes) crc = (crc >> 8) ^ kTables[0][(crc ^ *p++) & 0xff];
  return crc;
}

#if defined(__x86_64__)
// The build targets baseline x86-64, so SSE4.2 is enabled for this function alone and chosen
// at run time.
__attribute__((target("sse4.2"))) uint32_t update_sse42(uint32_t crc, const unsigned char* p, size_t bytes) {
  uint64_t wide = crc;
  for (; bytes >= 8; bytes -= 8, p += 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    wide = _mm_crc32_u64(wide, v);
  }
  crc = static_cast<uint32_t>(wide);
  for (; bytes > 0; --bytes) crc = _mm_crc32_u8(crc, *p++);
  return crc;
}

const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

// ---- SHA-256 -------------------------------------------------------------------------------

constexpr uint32_t kRoundConstants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

std::string to_hex(const unsigned char* bytes, size_t count) {
  static const char digits[] = "0123456789abcdef";
  std::string hex;
  for (size_t i = 0; i < count; ++i) {
    hex += digits[bytes[i] >> 4];
    hex += digits[bytes[i] & 15];
  }
  return hex;
}

}  // namespace

uint32_t crc32c_portable(const void* data, size_t bytes, uint32_t crc) {
  return ~update_portable(~crc, static_cast<const unsigned char*>(data), bytes);
}

uint32_t crc32c(const void* data, size_t bytes, uint32_t crc) {
#if defined(__x86_64__)
  if (kHaveSse42) return ~update_sse42(~crc, static_cast<const unsigned char*>(data), bytes);
#endif
  return crc32c_portable(data, bytes, crc);
}

std::string crc32c_hex(uint32_t crc) {
  const unsigned char bytes[4] = {static_cast<unsigned char>(crc >> 24), static_cast<unsigned char>(crc >> 16),
                                  static_cast<unsigned char>(crc >> 8), static_cast<unsigned char>(crc)};
  return to_hex(bytes, 4);
}

Sha256::Sha256()
    : state_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::compress(const unsigned char* block) {
  uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = uint32_t(block[4 * i]) << 24 | uint32_t(block[4 * i + 1]) << 16 | uint32_t(block[4 * i + 2]) << 8 |
           uint32_t(block[4 * i + 3]);
  for (int i = 16; i < 64; ++i) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state_[0], b = state_[1], c = state_[2], d = state_[3];
  uint32_t e = state_[4], f = state_[5], g = state_[6], h = state_[7];
  for (int i = 0; i < 64; ++i) {
    uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRoundConstants[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state_[0] += a, state_[1] += b, state_[2] += c, state_[3] += d;
  state_[4] += e, state_[5] += f, state_[6] += g, state_[7] += h;
}

void Sha256::update(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  total_bytes_ += bytes;
  while (bytes > 0) {
    size_t take = std::min(bytes, sizeof(buffer_) - buffered_);
    std::memcpy(buffer_ + buffered_, p, take);
    buffered_ += take;
    p += take;
    bytes -= take;
    if (buffered_ == sizeof(buffer_)) {
      compress(buffer_);
      buffered_ = 0;
    }
  }
}

std::string Sha256::hex_digest() {
  // Padding: a 1 bit, zeros up to 56 bytes mod 64, then the message length in bits (big-endian).
  const uint64_t bits = total_bytes_ * 8;
  const unsigned char one = 0x80, zero = 0;
  update(&one, 1);
  while (buffered_ != 56) update(&zero, 1);
  unsigned char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(bits >> (56 - 8 * i));
  update(length, 8);
  unsigned char digest[32];
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) digest[4 * i + j] = static_cast<unsigned char>(state_[i] >> (24 - 8 * j));
  return to_hex(digest, sizeof(digest));
}

std::string sha256_hex(const std::string& bytes) {
  Sha256 hash;
  hash.update(bytes.data(), bytes.size());
  return hash.hex_digest();
}

std::string sha256_of_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  ATTN_CHECK(file.is_open(), "cannot open ", path, " to compute its sha256");
  Sha256 hash;
  std::vector<char> block(1 << 20);
  while (file) {
    file.read(block.data(), std::streamsize(block.size()));
    hash.update(block.data(), size_t(file.gcount()));
  }
  ATTN_CHECK(!file.bad(), "error while reading ", path, " to compute its sha256");
  return hash.hex_digest();
}

}  // namespace attn::io
