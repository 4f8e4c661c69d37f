#pragma once
// TokenEmbeddings: the source and target embedding tables and the output projection, with the
// sharing options every model family offers:
//   shared_embeddings  one table "embedding" for both sides (needs one vocabulary), else
//                      "encoder.embedding" and "decoder.embedding"
//   tied_embeddings    logits = h E_target^T, else a Linear "decoder.output" (no bias)
// ParameterStore initialises parameters in registration order from one random stream, so a
// family registers the three parts where its parameter order has them: add_source, add_target,
// add_output, in this order, with its own parameters in between. The order fixes the initial
// parameters a seed gives.
//
// Shapes: ids (B, T) -> (B, T, E); hidden (..., E) -> logits (..., V). E is the width given.
#include <cstdint>

#include "core/parameter_store.h"
#include "io/config.h"
#include "layers/embedding.h"
#include "layers/linear.h"
#include "layers/run_context.h"
#include "models/model_family.h"
#include "models/seq2seq_model.h"

namespace attn::models {

// The vocabulary and embedding options of every family (its options struct derives from this).
struct TokenEmbeddingOptions {
  int64_t source_vocab = 8000;
  int64_t target_vocab = 8000;
  // One table for source and target (needs one vocabulary): model.shared_embeddings's default.
  bool shared_embeddings = io::defaults<io::ModelConfig>().shared_embeddings;
  // Output projection = target embedding^T: model.tied_embeddings's default.
  bool tied_embeddings = io::defaults<io::ModelConfig>().tied_embeddings;
  int32_t padding_id = 0;
};

// Sets `options` from `vocab` and the model-wide keys model.shared_embeddings and
// model.tied_embeddings; padding is data::kPadId.
void set_token_embedding_options(TokenEmbeddingOptions& options, const io::Config& config, const VocabSizes& vocab);

class TokenEmbeddings {
 public:
  TokenEmbeddings() = default;
  // Checks the options (shared embeddings need one vocabulary); registers nothing yet.
  TokenEmbeddings(const TokenEmbeddingOptions& options, int64_t width);

  void add_source(ParameterStore& store);  // the source table
  void add_target(ParameterStore& store);  // the target table: the source one when shared
  void add_output(ParameterStore& store);  // "decoder.output" when untied; nothing when tied

  const layers::Embedding& source() const { return source_; }
  const layers::Embedding& target() const { return target_; }
  // hidden (..., E) -> logits (..., V); an untied table's product in ctx.precision.
  Tensor project(const layers::RunContext& ctx, const Tensor& hidden) const;
  // The same projection as views of its parameters (the tied table or decoder.output), for the
  // fused loss (ops::linear_cross_entropy).
  OutputProjection projection() const;

 private:
  TokenEmbeddingOptions options_;
  int64_t width_ = 0;
  int added_ = 0;  // parts registered so far, to enforce the order
  layers::Embedding source_, target_;
  layers::Linear output_;                            // untied only
  std::shared_ptr<const MatmulWeight> tied_output_;  // tied only: the target table as the projection
};

}  // namespace attn::models
