#include "models/token_embeddings.h"

#include "data/vocab.h"
#include "ops/linear.h"
#include "ops/matmul.h"

namespace attn::models {

void set_token_embedding_options(TokenEmbeddingOptions& options, const io::Config& config, const VocabSizes& vocab) {
  options.source_vocab = vocab.source;
  options.target_vocab = vocab.target;
  options.shared_embeddings = config.model.shared_embeddings;
  options.tied_embeddings = config.model.tied_embeddings;
  options.padding_id = data::kPadId;
}

TokenEmbeddings::TokenEmbeddings(const TokenEmbeddingOptions& options, int64_t width)
    : options_(options), width_(width) {
  ATTN_CHECK(!options.shared_embeddings || options.source_vocab == options.target_vocab,
             "shared embeddings need one vocabulary, got ", options.source_vocab, " and ", options.target_vocab);
}

void TokenEmbeddings::add_source(ParameterStore& store) {
  ATTN_CHECK(added_ == 0, "token embeddings: the source table is registered first");
  source_ = layers::Embedding(store, options_.shared_embeddings ? "embedding" : "encoder.embedding",
                              options_.source_vocab, width_, options_.padding_id);
  ++added_;
}

void TokenEmbeddings::add_target(ParameterStore& store) {
  ATTN_CHECK(added_ == 1, "token embeddings: the target table is registered after the source table");
  target_ = options_.shared_embeddings
                ? source_
                : layers::Embedding(store, "decoder.embedding", options_.target_vocab, width_, options_.padding_id);
  ++added_;
}

void TokenEmbeddings::add_output(ParameterStore& store) {
  ATTN_CHECK(added_ == 2, "token embeddings: the output projection is registered after the target table");
  if (options_.tied_embeddings) {
    const std::string table = options_.shared_embeddings ? "embedding.weight" : "decoder.embedding.weight";
    tied_output_ = store.matmul_weight(table);
    target_.tie(tied_output_);
    if (options_.shared_embeddings) source_.tie(tied_output_);
  } else {
    output_ = layers::Linear(store, "decoder.output", width_, options_.target_vocab, false);
  }
  ++added_;
}

Tensor TokenEmbeddings::project(const layers::RunContext& ctx, const Tensor& hidden) const {
  Tape& tape = ctx.tape;
  if (!options_.tied_embeddings) return output_(tape, hidden);
  // f32 keeps its batched matmul (whose kernels a checkpoint's bits were trained with); bf16 (training
  // and decoding), int8 decoding and packed decoding multiply with the table's prepared form.
  if (tied_output_->precision != Precision::f32 || tied_output_->packed)
    return ops::linear(tape, hidden, *tied_output_, Tensor());
  ops::MatmulOptions transposed_table;
  transposed_table.transpose_b = true;
  transposed_table.precision = ctx.precision;
  return ops::matmul(tape, hidden, target_.table(), transposed_table);  // (..., E) x (V, E)^T
}

OutputProjection TokenEmbeddings::projection() const {
  if (options_.tied_embeddings) return {tied_output_.get(), Tensor()};
  return {&output_.forms(), output_.bias()};
}

}  // namespace attn::models
