#pragma once
// The gradient dump behind `attn-bench grad`: one training step of the model a config describes,
// written to one safetensors file that an independent implementation can replay and compare
// against (tools/check-gradients.py runs it through PyTorch autograd and torch.optim.Adam), as
// llm.c's test_gpt2.c does. Finite differences check each op's derivative; this checks that the
// whole model, its loss and its update are the ones the papers define.
//
// The step is train::TrainStep, the one attn-train runs (forward, backward, clipping, Adam at the
// schedule's rate), on one batch, with dropout switched off (config.model.*.dropout = 0) so that
// the step is deterministic. The file holds (docs/ARCHITECTURE.md, "Gradient dumps"):
//   src, src_lengths, tgt_in, tgt_out, tgt_lengths   the batch, int32, pad = data::kPadId
//   links                                            (N, 3) int32 rows (sentence, source, target)
//                                                    of the guided alignment's links
//   param.NAME, grad.NAME                            each parameter before the step and its
//                                                    gradient (before clipping)
//   step1.NAME, step3.NAME                           the parameters after 1 and 3 optimizer steps
//                                                    (each on the same batch)
//   logits (B, T, V), loss, nll, guided_loss, grad_norm
//   metadata: "config" (the resolved config, config_to_json), "precision", "loss_kernel", ...
#include <cstdint>
#include <string>

#include "io/config.h"

namespace attn::bench {

struct GradDumpOptions {
  std::string output;           // the safetensors file to write
  bool force = false;           // replace `output` if it exists (otherwise an error)
  int64_t batch_sentences = 4;  // B
  int64_t source_length = 9;    // the longest source, eos included; the others are shorter
  int64_t target_length = 7;    // the longest target, eos included
  bool unfused_loss = false;    // the loss over the full logits (attn-bench train --unfused-loss)
  // The first batch attn-train would take from the config's corpora (data.*, train.batch_tokens),
  // encoded with the vocabulary of its run directory (output_dir), instead of a synthetic one;
  // the sizes above are then unused.
  bool corpus = false;
};

struct GradDumpResult {
  int64_t parameters = 0;
  double loss = 0, grad_norm = 0;  // loss per target token (smoothed), norm before clipping
  std::string to_text(const std::string& path) const;
};

// Runs the step on the corpus's first batch or a synthetic one (random ids below vocab.size;
// lengths from the longest down, so rows are padded; joined pairs when data.concat_prob > 0;
// diagonal links when guided alignment is on) and writes the file. config.train.accumulate > 1 splits the batch into
// that many parts whose gradients the step sums.
GradDumpResult write_grad_dump(io::Config config, const GradDumpOptions& options);

}  // namespace attn::bench
