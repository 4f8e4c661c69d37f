#pragma once
// quantize_run: attn-quantize. A new run directory holding a trained run's config (output_dir
// set to the new directory), vocabulary files and record, and its checkpoint quantised to
// int8 (io::save_quantized_checkpoint: matrices as I8 + per-row scales, about 4x smaller) as
// checkpoint.best. load_run loads it like any run and decodes it in int8 by default; attn-train
// refuses to train it (train/run_directory.cpp).
#include <cstdint>
#include <string>

namespace attn::run {

struct QuantizeResult {
  std::string checkpoint;       // the int8 checkpoint written
  uintmax_t source_bytes = 0;   // size of the checkpoint it came from
  uintmax_t written_bytes = 0;  // size of the int8 one
};

// `checkpoint`: as load_run's. An existing non-empty `out_dir` is replaced only with `force`;
// `out_dir` may never be the run itself.
QuantizeResult quantize_run(const std::string& model_dir, const std::string& out_dir, bool force,
                            const std::string& checkpoint = "");

}  // namespace attn::run
