#pragma once
// Storage types. f32 is the working type; bf16 is a storage type for matmul inputs on AMX; s8
// holds quantised weights and activations of int8 decoding (core/quantized_matrix.h).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace attn {

enum class DType { f32, bf16, s8 };

inline size_t dtype_size(DType dtype) { return dtype == DType::f32 ? 4 : dtype == DType::bf16 ? 2 : 1; }
inline std::string dtype_name(DType dtype) {
  return dtype == DType::f32 ? "F32" : dtype == DType::bf16 ? "BF16" : "I8";
}

// bf16 is the upper half of an f32.
inline float bf16_to_f32(uint16_t value) {
  uint32_t bits = static_cast<uint32_t>(value) << 16;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

// Round to nearest even (what oneDNN's reorders do); NaN stays NaN.
inline uint16_t f32_to_bf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// out[i] = f32_to_bf16(in[i]) for count elements, on the OpenMP team for large counts. For plain
// arrays this beats a oneDNN reorder, whose two-thread split of a (rows, cols) matrix could be
// slower than one thread (docs/performance.md, "Where a training step goes").
void convert_to_bf16(const float* in, uint16_t* out, int64_t count);

}  // namespace attn
