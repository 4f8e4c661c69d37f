#pragma once
// The safetensors format (https://github.com/huggingface/safetensors), so that any tool can
// read our checkpoints:
//
//   [8 bytes]  N, the header length, unsigned little-endian
//   [N bytes]  JSON: {"<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]},
//                     ..., "__metadata__": {"<key>": "<string value>", ...}}
//   [rest]     raw little-endian tensor data; offsets are relative to the start of this part
//
// Writes are atomic (io/atomic_file.h: temporary file, fsync, rename, fsync of the directory),
// so a crash never leaves a half-written file at the path. Reads validate the whole header before reading any
// data and never read outside the file, whatever the input.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/buffer.h"
#include "core/dtype.h"
#include "core/shape.h"
#include "core/tensor.h"

namespace attn::io {

// The element types safetensors names (attn computes in F32 and stores BF16; the rest are
// here so that files from other tools are read, validated and reported correctly).
enum class ElementType { boolean, u8, i8, f8_e5m2, f8_e4m3, i16, u16, f16, bf16, i32, u32, f32, f64, i64, u64 };

size_t element_size(ElementType type);
std::string element_type_name(ElementType type);  // "F32", "BF16", ...
std::optional<ElementType> parse_element_type(const std::string& name);
ElementType element_type_of(DType dtype);

// One tensor to write: a NON-owning view of its bytes, which must stay alive during the write
// (so a checkpoint writes parameters straight from the flat buffer, without copies).
struct TensorEntry {
  std::string name;
  ElementType dtype = ElementType::f32;
  Shape shape;
  const void* data = nullptr;
  size_t bytes = 0;  // must equal numel(shape) * element_size(dtype)
};
// A view of an f32 or bf16 tensor's storage under `name`.
TensorEntry entry_of(const std::string& name, const Tensor& tensor);

// A tensor's bytes as read: a pool buffer, which a Tensor of the same bytes takes over without
// a copy (a checkpoint then sits in memory once while it is loaded, not twice).
class StoredBytes {
 public:
  StoredBytes() = default;
  explicit StoredBytes(size_t size) : buffer_(std::make_shared<Buffer>(size, false)) {}
  char* data() { return buffer_ ? static_cast<char*>(buffer_->data()) : nullptr; }
  const char* data() const { return buffer_ ? static_cast<const char*>(buffer_->data()) : nullptr; }
  size_t size() const { return buffer_ ? buffer_->bytes() : 0; }
  const BufferPtr& buffer() const { return buffer_; }

 private:
  BufferPtr buffer_;
};

// One tensor read back; owns its bytes.
struct StoredTensor {
  std::string name;
  ElementType dtype = ElementType::f32;
  Shape shape;
  StoredBytes bytes;
};

struct SafetensorsFile {
  std::string path;
  std::map<std::string, std::string> metadata;
  std::vector<StoredTensor> tensors;  // in data order (by offset)

  const StoredTensor* find(const std::string& name) const;  // nullptr when absent
};

// A tensor name as it appears in an error message: JSON-quoted, so that control characters in
// a hostile name cannot break the one-line message.
std::string quoted_name(const std::string& name);

// Writes atomically: path + ".tmp" in the same directory, then rename over `path`. Any failure
// throws attn::Error naming the path and the system's reason, and leaves an existing file at
// `path` untouched (and no temporary file behind).
void write_safetensors(const std::string& path, const std::vector<TensorEntry>& entries,
                       const std::map<std::string, std::string>& metadata = {});

// One tensor's entry in a file's header, checked against the file; its data not yet read.
struct SafetensorsEntry {
  std::string name;
  ElementType dtype = ElementType::f32;
  Shape shape;
  uint64_t begin = 0, end = 0;  // its bytes, relative to the start of the data
  size_t bytes() const { return static_cast<size_t>(end - begin); }
};

class InputFile;

// A file opened to be read one tensor at a time: the whole header is read and validated when it
// opens, and data only when asked for, so that a loader that uses each tensor and lets it go
// never holds the file whole. Every error is one line naming the file and the tensor or field.
class SafetensorsReader {
 public:
  explicit SafetensorsReader(const std::string& path);
  ~SafetensorsReader();
  SafetensorsReader(const SafetensorsReader&) = delete;
  SafetensorsReader& operator=(const SafetensorsReader&) = delete;

  const std::string& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::vector<SafetensorsEntry>& entries() const { return entries_; }  // in data order
  const SafetensorsEntry* find(const std::string& name) const;               // nullptr when absent

  StoredTensor read(const SafetensorsEntry& entry) const;
  // The entry's bytes in order, in pieces of at most 1 MiB held one at a time (a checksum of a
  // tensor that is not kept).
  void scan(const SafetensorsEntry& entry, const std::function<void(const char* bytes, size_t size)>& consume) const;

 private:
  std::string path_;
  std::unique_ptr<InputFile> file_;
  uint64_t data_start_ = 0;
  std::map<std::string, std::string> metadata_;
  std::vector<SafetensorsEntry> entries_;
};

// Reads and validates a whole file.
SafetensorsFile read_safetensors(const std::string& path);

// The metadata alone, from the header (a check before a whole checkpoint is worth reading).
std::map<std::string, std::string> read_safetensors_metadata(const std::string& path);

}  // namespace attn::io
