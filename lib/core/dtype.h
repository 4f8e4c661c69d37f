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

// bf16 is the upper half of an f32.
inline float bf16_to_f32(uint16_t value) {
  uint32_t bits = static_cast<uint32_t>(value) << 16;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

}  // namespace attn
