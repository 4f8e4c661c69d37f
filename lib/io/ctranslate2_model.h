#pragma once
// CTranslate2's model.bin (binary version 6, as its Python converters write it and its
// src/models/model.cc reads it), little-endian:
//
//   u32 binary version (6)
//   str spec name ("TransformerSpec"), u32 spec revision
//   u32 variable count, then per variable, in name order:
//       str name, u8 rank, u32 dims[rank], u8 type id, u32 byte count, bytes (row-major)
//   u32 alias count, then per alias: str alias, str name of the variable it stands for
//
// where str is u16 length (including a final NUL), the UTF-8 bytes, and the NUL. Type ids:
// float32 0, int8 1, int16 2, int32 3, float16 4, bfloat16 5. Layer attributes (flags, head
// counts, enums) are variables of rank 0. A model that holds the same tensor under several
// names (shared or tied embeddings) stores it once and names the others as aliases; the
// reader aliases NAME_scale along with NAME, so an int8 weight's scales follow it.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn::io {

enum class Ct2Type : uint8_t { float32 = 0, int8 = 1, int16 = 2, int32 = 3, float16 = 4, bfloat16 = 5 };

struct Ct2Variable {
  std::string name;  // scopes joined by '/': "encoder/layer_0/ffn/linear_0/weight"
  Ct2Type type = Ct2Type::float32;
  std::vector<uint32_t> shape;  // empty for a scalar
  std::string bytes;            // row-major, little-endian
};

// Rank-0 attributes, in the types CTranslate2's specs give them.
Ct2Variable ct2_flag(const std::string& name, bool value);  // int8 0/1
Ct2Variable ct2_int8(const std::string& name, int8_t value);
Ct2Variable ct2_int16(const std::string& name, int16_t value);
Ct2Variable ct2_int32(const std::string& name, int32_t value);
Ct2Variable ct2_float(const std::string& name, float value);
// A float32 tensor of `shape` from `values` (numel(shape) floats).
Ct2Variable ct2_floats(const std::string& name, std::vector<uint32_t> shape, const float* values);

struct Ct2Model {
  std::string spec;       // "TransformerSpec"
  uint32_t revision = 0;  // the spec's revision (TransformerSpec: 7)
  std::vector<Ct2Variable> variables;
  std::vector<std::pair<std::string, std::string>> aliases;  // alias -> variable name
};

// Replaces every non-scalar variable that is byte for byte equal (type, shape, values) to one
// earlier in name order by an alias of the first such, as CTranslate2's converters do.
void alias_duplicates(Ct2Model& model);

// The weights CTranslate2 quantises: every variable whose name ends in "weight" (linear and
// embedding tables). Each becomes int8 with `NAME_scale`, float32 per row: scale = 127 /
// max|row| (127 for a zero row), value = round-half-even(w * scale); CTranslate2 divides by
// the scale to dequantise. Other variables stay float32.
void quantize_int8(Ct2Model& model);
// Every float32 tensor (not the scalars) to float16 or bfloat16, rounded to nearest even.
void convert_floats(Ct2Model& model, Ct2Type type);

// The model.bin bytes, variables sorted by name. Throws attn::Error on a name longer than a
// u16 length allows or a tensor larger than a u32 byte count.
std::string serialize_ct2_model(const Ct2Model& model);

}  // namespace attn::io
