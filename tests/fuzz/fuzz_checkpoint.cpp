// libFuzzer target: the checkpoint path of attn-translate and --resume, bytes -> safetensors
// read (header length, JSON header, offsets, dtypes) -> attn checkpoint checks (format,
// extra tensors) -> parameters into a model's store -> Adam's moments -> train_state.
//
// The model is a fixed tiny ParameterStore ("encoder.weight" (4, 3), "encoder.bias" (3),
// "decoder.weight" (2, 4)); the seed corpus holds real checkpoints of it. Every input must end
// in success or an attn::Error.
#include <cstddef>
#include <cstdint>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

#include "core/parameter_store.h"
#include "io/checkpoint.h"
#include "train/train_state.h"

namespace {

attn::ParameterStore& model_store() {
  static attn::ParameterStore* store = [] {
    auto* s = new attn::ParameterStore(1);
    s->add("encoder.weight", {4, 3}, attn::init::zeros());
    s->add("encoder.bias", {3}, attn::init::zeros());
    s->add("decoder.weight", {2, 4}, attn::init::zeros());
    s->finalize();
    return s;
  }();
  return *store;
}

// An in-memory file for the input: the reader takes a path, and /proc/self/fd/N is one.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("fuzz_checkpoint", 0)) {}
  std::string hold(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0 || pwrite(fd_, data, size, 0) != ssize_t(size)) std::abort();
    return "/proc/self/fd/" + std::to_string(fd_);
  }

 private:
  int fd_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static MemoryFile file;
  const std::string path = file.hold(data, size);
  attn::ParameterStore& store = model_store();
  try {
    attn::io::Checkpoint checkpoint = attn::io::load_checkpoint(path);
    attn::io::load_parameters(checkpoint, store);
    attn::Tensor moment = attn::Tensor::zeros({static_cast<int64_t>(store.size())});
    attn::io::load_extra(checkpoint, "optimizer.m", moment);
    attn::train::train_state_of(checkpoint);
  } catch (const attn::Error&) {
  }
  return 0;
}
