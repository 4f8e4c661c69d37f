// attn-serve's backend decodes a queue's sentences as a batch a thread when
// decode.parallel_batches is on: the translations of one batch, in one hand-out to the threads.
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/parallel.h"
#include "data/data_fixtures.h"
#include "data/vocab.h"
#include "models/tiny_models.h"
#include "serve/translator_backend.h"
#include "thread_count.h"

using namespace attn;
using attn::testing::ThreadCount;

TEST_CASE("the serving backend decodes a queue as a batch a thread - the translations of one batch", "[serve]") {
  const data::Vocab vocab = data::Vocab::load(attn::testing::tiny_vocab_model("unigram"));
  models::TransformerOptions model_options = attn::testing::tiny_transformer_options();
  model_options.source_vocab = model_options.target_vocab = vocab.size();
  const models::TransformerModel model(model_options, 5);
  std::vector<std::string> lines = attn::testing::synthetic_lines(12, 17);
  ThreadCount threads(2);

  auto decode = [&](bool parallel_batches) {
    decode::TranslateOptions options;
    options.search.beam = 3;
    options.max_source_tokens = options.search.max_output_tokens = 64;
    options.parallel_batches = parallel_batches;
    serve::TranslatorBackend backend(model, vocab, vocab, options, 2);
    const std::vector<std::vector<int32_t>> encoded = backend.encode(lines);
    std::vector<const std::vector<int32_t>*> sentences;
    for (const auto& ids : encoded) sentences.push_back(&ids);
    const uint64_t loops_before = parallel_loops_started();
    std::vector<serve::SentenceResult> results =
        backend.decode(sentences, 2, std::vector<std::optional<decode::AlignmentExtraction>>(lines.size()),
                       std::vector<std::optional<std::string>>(lines.size()));
    if (parallel_batches) CHECK(parallel_loops_started() - loops_before == 1);  // two batches, one hand-out
    return results;
  };
  const auto one_batch = decode(false);
  const auto a_batch_a_thread = decode(true);
  REQUIRE(a_batch_a_thread.size() == lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    INFO("line " << i << ": " << lines[i]);
    CHECK(a_batch_a_thread[i].texts == one_batch[i].texts);
    REQUIRE(a_batch_a_thread[i].hypotheses.size() == one_batch[i].hypotheses.size());
    for (size_t k = 0; k < one_batch[i].hypotheses.size(); ++k)
      // Batches of other sizes: the same sums, perhaps by other kernels.
      CHECK(a_batch_a_thread[i].hypotheses[k].score == Approx(one_batch[i].hypotheses[k].score).epsilon(1e-5));
  }
}
