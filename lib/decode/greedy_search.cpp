#include <algorithm>

#include "decode/search.h"
#include "ops/log_softmax.h"

namespace attn::decode {

std::vector<Hypothesis> greedy_search(const models::Seq2SeqModel& model, const data::Batch& source,
                                      const SearchOptions& options) {
  Tape tape;
  NoGradScope no_grad(tape);
  layers::RunContext ctx{tape};
  std::unique_ptr<models::DecoderState> state = model.start(ctx, source);

  std::vector<Hypothesis> result(source.size);
  std::vector<int64_t> active(source.size);  // sentence of each state row
  std::vector<int64_t> limits(source.size);
  for (int64_t b = 0; b < source.size; ++b) {
    active[b] = b;
    limits[b] = max_output_length(source.src_lengths[b], options);
  }
  std::vector<int32_t> previous(source.size, options.bos_id);

  while (!active.empty()) {
    Tensor logits = model.step(ctx, *state, previous);  // (R, V)
    ops::log_softmax_rows_in_place(logits);
    int64_t width = logits.dim(1);
    std::vector<int64_t> keep_rows;
    std::vector<int64_t> still_active;
    std::vector<int32_t> next;
    for (size_t r = 0; r < active.size(); ++r) {
      const float* row = logits.data() + r * width;
      int32_t token = static_cast<int32_t>(std::max_element(row, row + width) - row);
      Hypothesis& hypothesis = result[active[r]];
      hypothesis.tokens.push_back(token);
      hypothesis.log_prob += row[token];
      bool done = token == options.eos_id || int64_t(hypothesis.tokens.size()) >= limits[active[r]];
      if (done) continue;
      keep_rows.push_back(static_cast<int64_t>(r));
      still_active.push_back(active[r]);
      next.push_back(token);
    }
    if (still_active.size() != active.size() && !still_active.empty()) state->select_rows(keep_rows);
    active = std::move(still_active);
    previous = std::move(next);
  }
  for (auto& hypothesis : result) hypothesis.score = hypothesis.log_prob;
  return result;
}

}  // namespace attn::decode
