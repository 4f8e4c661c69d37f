#pragma once
// Storage types. f32 is the working type; bf16 is a storage type for matmul inputs on AMX.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace attn {

enum class DType { f32, bf16 };

inline size_t dtype_size(DType dtype) { return dtype == DType::f32 ? 4 : 2; }
inline std::string dtype_name(DType dtype) { return dtype == DType::f32 ? "F32" : "BF16"; }

// bf16 is the upper half of an f32; rounding to nearest even on the way down.
inline uint16_t f32_to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu))
    return uint16_t((bits >> 16) | 0x40);  // NaN stays NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}
inline float bf16_to_f32(uint16_t value) {
  uint32_t bits = static_cast<uint32_t>(value) << 16;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

}  // namespace attn
