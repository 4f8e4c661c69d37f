#pragma once
// export_ctranslate2: attn-export --format ctranslate2. A trained Transformer run as a
// CTranslate2 (v4) model directory that translates as the run does:
//
//   model.bin     TransformerSpec revision 7 (io/ctranslate2_model.h), the run's weights under
//                 CTranslate2's names, shared and tied tables stored once (aliases)
//   config.json   unk/bos/eos tokens (the SentencePiece pieces of ids 1, 2, 3), decoder start
//                 token <s> (attn's bos), add_source_eos (attn ends every source with eos),
//                 layer_norm_epsilon
//   shared_vocabulary.json, or source_vocabulary.json + target_vocabulary.json: the pieces
//                 by id, as CTranslate2 reads them
//
// How each model setting is expressed (docs/guide.md, "Export to CTranslate2"): post/pre-norm
// as pre_norm (pre-norm's final norms as the encoder's and decoder's layer_norm); relu and
// gelu (erf) as CTranslate2's activations 0 and 3; token embeddings scaled by sqrt(d_model)
// (scale_embeddings); sinusoidal and learned positions as stored tables (CTranslate2's own
// sinusoids start at position 1 and put sin and cos in halves, attn's start at 0 and
// interleave them: its table is written as the encodings, max_positions rows, attn's own limit);
// rotary as each self-attention's rotary_dim 0 (the whole head), interleaved pairs, base 10000;
// ALiBi in the decoder as CTranslate2's alibi (negative positions, unscaled, so a step's bias
// is attn's exactly), and in the encoder, where CTranslate2 has no ALiBi, as a T5 relative
// attention bias whose exact buckets cover every distance of the longest source attn
// decodes (4 x data.max_len). The RNN is refused.
#include <string>

namespace attn::run {

// The type of the weights written (CTranslate2's model types): float32 as trained; int8 (the
// linear and embedding tables, per-row scales; the rest float32); float16 or bfloat16 (every
// float tensor).
enum class Ct2Weights { float32, int8, float16, bfloat16 };

struct Ct2ExportOptions {
  std::string model_dir;
  std::string checkpoint;  // as load_run's: "" for the run's best (or last)
  std::string out_dir;
  bool force = false;  // replace a non-empty out_dir
  Ct2Weights weights = Ct2Weights::float32;
};

struct Ct2ExportResult {
  std::string checkpoint;  // the checkpoint exported
  size_t variables = 0;    // tensors and attributes in model.bin
  size_t aliases = 0;
};

// Writes the model directory into a temporary sibling of out_dir and renames it into place, so
// out_dir is never half-written. Throws attn::Error naming the setting CTranslate2 cannot
// express, or --out when it is the run itself, not a directory, or not empty without `force`.
Ct2ExportResult export_ctranslate2(const Ct2ExportOptions& options);

}  // namespace attn::run
