#include "io/ctranslate2_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "core/check.h"
#include "core/dtype.h"

namespace attn::io {

namespace {

constexpr uint32_t kBinaryVersion = 6;

size_t type_size(Ct2Type type) {
  switch (type) {
    case Ct2Type::int8:
      return 1;
    case Ct2Type::int16:
    case Ct2Type::float16:
    case Ct2Type::bfloat16:
      return 2;
    default:
      return 4;
  }
}

template <class T>
Ct2Variable scalar(const std::string& name, Ct2Type type, T value) {
  Ct2Variable variable{name, type, {}, std::string(sizeof(T), '\0')};
  std::memcpy(variable.bytes.data(), &value, sizeof(T));
  return variable;
}

size_t numel(const std::vector<uint32_t>& shape) {
  size_t count = 1;
  for (uint32_t dim : shape) count *= dim;
  return count;
}

std::vector<float> floats_of(const Ct2Variable& variable) {
  std::vector<float> values(numel(variable.shape));
  std::memcpy(values.data(), variable.bytes.data(), values.size() * sizeof(float));
  return values;
}

// IEEE binary16, round to nearest even (as numpy's astype(float16)); overflow gives infinity.
uint16_t f32_to_f16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const uint16_t sign = uint16_t((bits >> 16) & 0x8000u);
  const uint32_t exponent = (bits >> 23) & 0xffu, mantissa = bits & 0x7fffffu;
  if (exponent == 0xffu) return uint16_t(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  const int biased = int(exponent) - 127 + 15;
  if (biased >= 31) return uint16_t(sign | 0x7c00u);
  // A normal half keeps the top 10 mantissa bits; a subnormal one fewer, the implicit 1 included.
  const uint32_t significand = biased > 0 ? mantissa : (mantissa | 0x800000u);
  const int shift = biased > 0 ? 13 : 14 - biased;
  if (shift > 24) return sign;
  uint32_t half = (biased > 0 ? uint32_t(biased) << 10 : 0u) | (significand >> shift);
  const uint32_t rest = significand & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (half & 1u))) ++half;  // may carry into the exponent
  return uint16_t(sign | half);
}

void put_u8(std::string& out, uint8_t value) { out.push_back(char(value)); }
void put_u16(std::string& out, uint16_t value) { out.append(reinterpret_cast<const char*>(&value), 2); }
void put_u32(std::string& out, uint32_t value) { out.append(reinterpret_cast<const char*>(&value), 4); }
void put_string(std::string& out, const std::string& text) {
  ATTN_CHECK(text.size() + 1 <= std::numeric_limits<uint16_t>::max(), "CTranslate2 model: name too long: ", text);
  put_u16(out, uint16_t(text.size() + 1));
  out += text;
  put_u8(out, 0);
}

}  // namespace

Ct2Variable ct2_flag(const std::string& name, bool value) { return ct2_int8(name, value ? 1 : 0); }
Ct2Variable ct2_int8(const std::string& name, int8_t value) { return scalar(name, Ct2Type::int8, value); }
Ct2Variable ct2_int16(const std::string& name, int16_t value) { return scalar(name, Ct2Type::int16, value); }
Ct2Variable ct2_int32(const std::string& name, int32_t value) { return scalar(name, Ct2Type::int32, value); }
Ct2Variable ct2_float(const std::string& name, float value) { return scalar(name, Ct2Type::float32, value); }

Ct2Variable ct2_floats(const std::string& name, std::vector<uint32_t> shape, const float* values) {
  Ct2Variable variable{name, Ct2Type::float32, std::move(shape), {}};
  variable.bytes.assign(reinterpret_cast<const char*>(values), numel(variable.shape) * sizeof(float));
  return variable;
}

void alias_duplicates(Ct2Model& model) {
  std::sort(model.variables.begin(), model.variables.end(),
            [](const Ct2Variable& a, const Ct2Variable& b) { return a.name < b.name; });
  std::vector<Ct2Variable> kept;
  for (Ct2Variable& variable : model.variables) {
    auto same = std::find_if(kept.begin(), kept.end(), [&](const Ct2Variable& earlier) {
      return !variable.shape.empty() && earlier.type == variable.type && earlier.shape == variable.shape &&
             earlier.bytes == variable.bytes;
    });
    if (same != kept.end())
      model.aliases.emplace_back(variable.name, same->name);
    else
      kept.push_back(std::move(variable));
  }
  model.variables = std::move(kept);
}

void quantize_int8(Ct2Model& model) {
  std::vector<Ct2Variable> scales;
  for (Ct2Variable& variable : model.variables) {
    const std::string suffix = "weight";
    const bool is_weight = variable.name.size() >= suffix.size() &&
                           variable.name.compare(variable.name.size() - suffix.size(), suffix.size(), suffix) == 0;
    if (!is_weight || variable.shape.size() != 2 || variable.type != Ct2Type::float32) continue;
    const uint32_t rows = variable.shape[0], columns = variable.shape[1];
    const std::vector<float> values = floats_of(variable);
    std::vector<float> row_scales(rows);
    std::string quantized(values.size(), '\0');
    for (uint32_t r = 0; r < rows; ++r) {
      const float* row = values.data() + size_t(r) * columns;
      float largest = 0.f;
      for (uint32_t c = 0; c < columns; ++c) largest = std::max(largest, std::fabs(row[c]));
      row_scales[r] = largest == 0.f ? 1.f : 127.f / largest;  // CTranslate2: amax 0 counts as 127
      for (uint32_t c = 0; c < columns; ++c)
        quantized[size_t(r) * columns + c] = char(int8_t(std::nearbyint(row[c] * row_scales[r])));
    }
    variable.type = Ct2Type::int8;
    variable.bytes = std::move(quantized);
    scales.push_back(ct2_floats(variable.name + "_scale", {rows}, row_scales.data()));
  }
  for (Ct2Variable& scale : scales) model.variables.push_back(std::move(scale));
}

void convert_floats(Ct2Model& model, Ct2Type type) {
  ATTN_CHECK(type == Ct2Type::float16 || type == Ct2Type::bfloat16, "convert_floats: float16 or bfloat16 only");
  for (Ct2Variable& variable : model.variables) {
    if (variable.shape.empty() || variable.type != Ct2Type::float32) continue;
    const std::vector<float> values = floats_of(variable);
    std::vector<uint16_t> halves(values.size());
    for (size_t i = 0; i < values.size(); ++i)
      halves[i] = type == Ct2Type::float16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
    variable.type = type;
    variable.bytes.assign(reinterpret_cast<const char*>(halves.data()), halves.size() * 2);
  }
}

std::string serialize_ct2_model(const Ct2Model& model) {
  std::vector<const Ct2Variable*> sorted;
  for (const Ct2Variable& variable : model.variables) sorted.push_back(&variable);
  std::sort(sorted.begin(), sorted.end(), [](const Ct2Variable* a, const Ct2Variable* b) { return a->name < b->name; });
  std::string out;
  put_u32(out, kBinaryVersion);
  put_string(out, model.spec);
  put_u32(out, model.revision);
  put_u32(out, uint32_t(sorted.size()));
  for (const Ct2Variable* variable : sorted) {
    ATTN_CHECK(variable->bytes.size() == numel(variable->shape) * type_size(variable->type),
               "CTranslate2 model: ", variable->name, " holds ", variable->bytes.size(),
               " bytes, not what its shape and type need");
    ATTN_CHECK(variable->bytes.size() <= std::numeric_limits<uint32_t>::max(), "CTranslate2 model: ", variable->name,
               " is larger than 4 GiB, which model.bin cannot hold");
    put_string(out, variable->name);
    put_u8(out, uint8_t(variable->shape.size()));
    for (uint32_t dim : variable->shape) put_u32(out, dim);
    put_u8(out, uint8_t(variable->type));
    put_u32(out, uint32_t(variable->bytes.size()));
    out += variable->bytes;
  }
  put_u32(out, uint32_t(model.aliases.size()));
  for (const auto& [alias, name] : model.aliases) {
    put_string(out, alias);
    put_string(out, name);
  }
  return out;
}

}  // namespace attn::io
