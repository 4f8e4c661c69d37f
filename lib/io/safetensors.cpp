#include "io/safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "io/atomic_file.h"
#include "io/json_depth.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian; so is this code");

namespace attn::io {

namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

constexpr uint64_t kMaxHeaderBytes = 100ull * 1000 * 1000;
constexpr const char* kMetadataKey = "__metadata__";

struct TypeInfo {
  ElementType type;
  const char* name;
  size_t size;
};
constexpr TypeInfo kTypes[] = {
    {ElementType::boolean, "BOOL", 1},    {ElementType::u8, "U8", 1},           {ElementType::i8, "I8", 1},
    {ElementType::f8_e5m2, "F8_E5M2", 1}, {ElementType::f8_e4m3, "F8_E4M3", 1}, {ElementType::i16, "I16", 2},
    {ElementType::u16, "U16", 2},         {ElementType::f16, "F16", 2},         {ElementType::bf16, "BF16", 2},
    {ElementType::i32, "I32", 4},         {ElementType::u32, "U32", 4},         {ElementType::f32, "F32", 4},
    {ElementType::f64, "F64", 8},         {ElementType::i64, "I64", 8},         {ElementType::u64, "U64", 8},
};

const TypeInfo& info(ElementType type) {
  for (const TypeInfo& entry : kTypes)
    if (entry.type == type) return entry;
  ATTN_CHECK(false, "unknown element type ", static_cast<int>(type));
  return kTypes[0];
}

std::string system_error() { return std::strerror(errno); }

// numel(shape) * element_size without overflow; nullopt when it does not fit in 64 bits.
std::optional<uint64_t> byte_count(const Shape& shape, ElementType type) {
  uint64_t count = element_size(type);
  for (int64_t dim : shape) {
    if (dim < 0 || __builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count)) return std::nullopt;
  }
  return count;
}

// ---- writing -------------------------------------------------------------------------------

void check_entries(const std::string& path, const std::vector<TensorEntry>& entries) {
  std::map<std::string, int> seen;
  for (const TensorEntry& entry : entries) {
    const std::string name = quoted_name(entry.name);
    ATTN_CHECK(!entry.name.empty() && entry.name != kMetadataKey, path, ": cannot write a tensor named ", name);
    ATTN_CHECK(seen[entry.name]++ == 0, path, ": tensor ", name, " appears twice");
    auto bytes = byte_count(entry.shape, entry.dtype);
    ATTN_CHECK(bytes && *bytes == entry.bytes, path, ": tensor ", name, " has ", entry.bytes, " bytes but shape ",
               to_string(entry.shape), " of ", element_type_name(entry.dtype), " needs ",
               bytes ? std::to_string(*bytes) : std::string("more than 2^64"));
    ATTN_CHECK(entry.data || entry.bytes == 0, path, ": tensor ", name, " has no data");
  }
}

// The JSON header, padded with spaces to a multiple of 8 bytes so the data starts aligned.
std::string make_header(const std::string& path, const std::vector<TensorEntry>& entries,
                        const std::map<std::string, std::string>& metadata) {
  ordered_json header = ordered_json::object();
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  uint64_t offset = 0;
  for (const TensorEntry& entry : entries) {
    header[entry.name] = {{"dtype", element_type_name(entry.dtype)},
                          {"shape", entry.shape},
                          {"data_offsets", {offset, offset + entry.bytes}}};
    offset += entry.bytes;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const json::exception& error) {  // invalid UTF-8 in a name or a metadata string
    ATTN_CHECK(false, path, ": cannot encode the header: ", error.what());
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

// ---- reading -------------------------------------------------------------------------------

}  // namespace

class InputFile {
 public:
  explicit InputFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    ATTN_CHECK(fd_ >= 0, path, ": cannot open: ", system_error());
    struct stat status;
    std::string problem;
    if (::fstat(fd_, &status) != 0)
      problem = system_error();
    else if (!S_ISREG(status.st_mode))
      problem = "not a regular file";
    if (!problem.empty()) {
      ::close(fd_);  // the destructor does not run when the constructor throws
      ATTN_CHECK(false, path, ": cannot read: ", problem);
    }
    size_ = static_cast<uint64_t>(status.st_size);
  }
  ~InputFile() { ::close(fd_); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const { return size_; }

  // Exactly `bytes` bytes at `offset`, which the caller has checked lie inside the file.
  void read(uint64_t offset, void* destination, size_t bytes, const std::string& what) const {
    char* cursor = static_cast<char*>(destination);
    while (bytes > 0) {
      ssize_t got = ::pread(fd_, cursor, std::min<size_t>(bytes, 1u << 30), static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      ATTN_CHECK(got > 0, path_, ": cannot read ", what, ": ", got < 0 ? system_error() : "unexpected end of file");
      cursor += got;
      offset += static_cast<uint64_t>(got);
      bytes -= static_cast<size_t>(got);
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

namespace {

// Reads the length prefix and the JSON header; returns the parsed header.
json read_header(const std::string& path, const InputFile& file, uint64_t& header_bytes) {
  ATTN_CHECK(file.size() >= 8, path, ": file of ", file.size(), " bytes is too small for a safetensors header");
  unsigned char prefix[8];
  file.read(0, prefix, 8, "the header length");
  header_bytes = 0;
  for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | prefix[i];
  ATTN_CHECK(header_bytes <= file.size() - 8, path, ": header length ", header_bytes,
             " runs past the end of the file (", file.size(), " bytes)");
  ATTN_CHECK(header_bytes <= kMaxHeaderBytes, path, ": header length ", header_bytes, " exceeds the limit of ",
             kMaxHeaderBytes, " bytes");
  std::string text(header_bytes, '\0');
  file.read(8, text.data(), text.size(), "the header");
  json header;
  try {
    header = json::parse(text, json_depth_limit(path));
  } catch (const json::exception& error) {
    ATTN_CHECK(false, path, ": header is not valid JSON: ", error.what());
  }
  ATTN_CHECK(header.is_object(), path, ": header is not a JSON object");
  return header;
}

std::map<std::string, std::string> parse_metadata(const std::string& path, const json& value) {
  ATTN_CHECK(value.is_object(), path, ": ", kMetadataKey, " is not a JSON object");
  std::map<std::string, std::string> metadata;
  for (const auto& [key, item] : value.items()) {
    ATTN_CHECK(item.is_string(), path, ": ", kMetadataKey, " value of ", quoted_name(key), " is not a string");
    metadata[key] = item.get<std::string>();
  }
  return metadata;
}

// A JSON array of non-negative integers that fit in int64 (shape dims and offsets alike).
std::vector<uint64_t> parse_sizes(const std::string& where, const json& value) {
  ATTN_CHECK(value.is_array(), where, " is not an array");
  std::vector<uint64_t> sizes;
  for (const json& item : value) {
    ATTN_CHECK(item.is_number_unsigned() && item.get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max()),
               where, " holds ", item.dump(), ", not a non-negative integer");
    sizes.push_back(item.get<uint64_t>());
  }
  return sizes;
}

SafetensorsEntry parse_entry(const std::string& path, const std::string& name, const json& value, uint64_t data_bytes) {
  const std::string where = path + ": tensor " + quoted_name(name);
  ATTN_CHECK(value.is_object(), where, " is not a JSON object");
  for (const auto& [key, item] : value.items())
    ATTN_CHECK(key == "dtype" || key == "shape" || key == "data_offsets", where, " has an unknown field ",
               quoted_name(key));
  ATTN_CHECK(value.contains("dtype") && value["dtype"].is_string(), where, " has no string field \"dtype\"");
  auto dtype = parse_element_type(value["dtype"].get<std::string>());
  ATTN_CHECK(dtype, where, " has an unknown dtype ", value["dtype"].dump());
  ATTN_CHECK(value.contains("shape"), where, " has no field \"shape\"");
  std::vector<uint64_t> dims = parse_sizes(where + " shape", value["shape"]);
  ATTN_CHECK(value.contains("data_offsets"), where, " has no field \"data_offsets\"");
  std::vector<uint64_t> offsets = parse_sizes(where + " data_offsets", value["data_offsets"]);
  ATTN_CHECK(offsets.size() == 2, where, " data_offsets has ", offsets.size(), " values, not [begin, end]");
  SafetensorsEntry spec{name, *dtype, Shape(dims.begin(), dims.end()), offsets[0], offsets[1]};
  ATTN_CHECK(spec.begin <= spec.end && spec.end <= data_bytes, where, " data_offsets [", spec.begin, ", ", spec.end,
             "] lie outside the data (", data_bytes, " bytes)");
  auto bytes = byte_count(spec.shape, spec.dtype);
  ATTN_CHECK(bytes && *bytes == spec.end - spec.begin, where, " has ", spec.end - spec.begin, " bytes but shape ",
             to_string(spec.shape), " of ", element_type_name(spec.dtype), " needs ",
             bytes ? std::to_string(*bytes) : std::string("more than 2^64"));
  return spec;
}

// Sorted by offset; overlapping tensors are rejected (they would also let a small file claim
// far more memory than it holds).
std::vector<SafetensorsEntry> parse_entries(const std::string& path, const json& header, uint64_t data_bytes) {
  std::vector<SafetensorsEntry> specs;
  for (const auto& [name, value] : header.items())
    if (name != kMetadataKey) specs.push_back(parse_entry(path, name, value, data_bytes));
  std::sort(specs.begin(), specs.end(), [](const SafetensorsEntry& a, const SafetensorsEntry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  for (size_t i = 1; i < specs.size(); ++i)
    ATTN_CHECK(specs[i].begin >= specs[i - 1].end, path, ": tensors ", quoted_name(specs[i - 1].name), " and ",
               quoted_name(specs[i].name), " overlap");
  return specs;
}

}  // namespace

std::string quoted_name(const std::string& name) {
  return json(name).dump(-1, ' ', false, json::error_handler_t::replace);
}

size_t element_size(ElementType type) { return info(type).size; }
std::string element_type_name(ElementType type) { return info(type).name; }

std::optional<ElementType> parse_element_type(const std::string& name) {
  for (const TypeInfo& entry : kTypes)
    if (name == entry.name) return entry.type;
  return std::nullopt;
}

ElementType element_type_of(DType dtype) {
  return dtype == DType::f32 ? ElementType::f32 : dtype == DType::bf16 ? ElementType::bf16 : ElementType::i8;
}

TensorEntry entry_of(const std::string& name, const Tensor& tensor) {
  return {name, element_type_of(tensor.dtype()), tensor.shape(), tensor.raw(),
          static_cast<size_t>(tensor.numel()) * dtype_size(tensor.dtype())};
}

const StoredTensor* SafetensorsFile::find(const std::string& name) const {
  for (const StoredTensor& tensor : tensors)
    if (tensor.name == name) return &tensor;
  return nullptr;
}

void write_safetensors(const std::string& path, const std::vector<TensorEntry>& entries,
                       const std::map<std::string, std::string>& metadata) {
  check_entries(path, entries);
  const std::string header = make_header(path, entries, metadata);
  unsigned char prefix[8];
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(uint64_t(header.size()) >> (8 * i));
  AtomicFile file(path);
  file.write(prefix, sizeof(prefix));
  file.write(header.data(), header.size());
  for (const TensorEntry& entry : entries) file.write(entry.data, entry.bytes);
  file.commit();
}

SafetensorsReader::SafetensorsReader(const std::string& path) : path_(path), file_(std::make_unique<InputFile>(path)) {
  uint64_t header_bytes = 0;
  json header = read_header(path, *file_, header_bytes);
  data_start_ = 8 + header_bytes;
  if (header.contains(kMetadataKey)) metadata_ = parse_metadata(path, header[kMetadataKey]);
  entries_ = parse_entries(path, header, file_->size() - data_start_);
}

SafetensorsReader::~SafetensorsReader() = default;

const SafetensorsEntry* SafetensorsReader::find(const std::string& name) const {
  for (const SafetensorsEntry& entry : entries_)
    if (entry.name == name) return &entry;
  return nullptr;
}

StoredTensor SafetensorsReader::read(const SafetensorsEntry& entry) const {
  StoredTensor tensor{entry.name, entry.dtype, entry.shape, StoredBytes(entry.bytes())};
  file_->read(data_start_ + entry.begin, tensor.bytes.data(), tensor.bytes.size(), "tensor " + quoted_name(entry.name));
  return tensor;
}

void SafetensorsReader::scan(const SafetensorsEntry& entry,
                             const std::function<void(const char* bytes, size_t size)>& consume) const {
  constexpr size_t kPiece = size_t(1) << 20;
  std::vector<char> piece(std::min(kPiece, entry.bytes()));
  for (uint64_t at = entry.begin; at < entry.end;) {
    const size_t size = static_cast<size_t>(std::min<uint64_t>(kPiece, entry.end - at));
    file_->read(data_start_ + at, piece.data(), size, "tensor " + quoted_name(entry.name));
    consume(piece.data(), size);
    at += size;
  }
}

SafetensorsFile read_safetensors(const std::string& path) {
  SafetensorsReader reader(path);
  SafetensorsFile result;
  result.path = path;
  result.metadata = reader.metadata();
  // Only now, with every promise checked, touch the data.
  for (const SafetensorsEntry& entry : reader.entries()) result.tensors.push_back(reader.read(entry));
  return result;
}

std::map<std::string, std::string> read_safetensors_metadata(const std::string& path) {
  InputFile file(path);
  uint64_t header_bytes = 0;
  json header = read_header(path, file, header_bytes);
  if (!header.contains(kMetadataKey)) return {};
  return parse_metadata(path, header[kMetadataKey]);
}

}  // namespace attn::io
