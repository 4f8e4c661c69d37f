#pragma once
// Checksums of stored files:
//   CRC32C (Castagnoli, as in iSCSI, ext4 and RocksDB) over a checkpoint's tensor data, to
//     catch a damaged file; SSE4.2's crc32 instruction when the CPU has it (several bytes per
//     cycle, cheap beside reading the file), a table-driven version otherwise.
//   SHA-256, to identify a file (a run's vocabulary) by its content.
#include <cstddef>
#include <cstdint>
#include <string>

namespace attn::io {

// CRC32C of `bytes` bytes, continuing from `crc` (the CRC32C of the data before), so that
// crc32c(b, nb, crc32c(a, na)) is the CRC32C of a followed by b. crc32c("123456789") is 0xe3069283.
uint32_t crc32c(const void* data, size_t bytes, uint32_t crc = 0);

// The table-driven version alone, whatever the CPU (for the test that both agree).
uint32_t crc32c_portable(const void* data, size_t bytes, uint32_t crc = 0);

// "e3069283": 8 lowercase hex digits.
std::string crc32c_hex(uint32_t crc);

// SHA-256 (FIPS 180-4), fed in pieces; hex_digest() ends it.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t bytes);
  std::string hex_digest();  // 64 lowercase hex digits

 private:
  void compress(const unsigned char* block);

  uint32_t state_[8];
  unsigned char buffer_[64];
  size_t buffered_ = 0;
  uint64_t total_bytes_ = 0;
};

std::string sha256_hex(const std::string& bytes);
// The SHA-256 of a file's content; throws attn::Error naming the file when it cannot be read.
std::string sha256_of_file(const std::string& path);

}  // namespace attn::io
