#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/fast_math.h"
#include "core/rng.h"
#include "decode/logits_processor.h"
#include "decode/search.h"
#include "layers/row_gather.h"
#include "ops/log_softmax.h"

namespace attn::decode {

namespace {

// Keeps a finished sentence's row in the decoding state until at least half the rows are
// finished, then drops them all at once. Dropping a row copies every layer's caches and makes
// each product a new shape; an idle row costs little, since a step's products at a few dozen rows
// take as long as their weights take to read (docs/performance.md, "Decoding without copies").
bool worth_dropping(int64_t finished_rows, int64_t state_rows) { return 2 * finished_rows >= state_rows; }

// A state row whose sentence is finished: idle, its output ignored.
constexpr int64_t kFinished = -1;

// The processors on the logits of every live row, before their log-softmax.
void process_rows(LogitsProcessors& processors, Tensor& logits, const std::vector<int64_t>& sentence_of_row,
                  const std::vector<Hypothesis>& result) {
  const int64_t rows = logits.dim(0), width = logits.dim(1);
  processors.start_step(rows);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t sentence = sentence_of_row[size_t(r)];
    if (sentence != kFinished) processors.process(r, logits.data() + r * width, width, result[size_t(sentence)].tokens);
  }
}

// The finished rows leave the state once worth_dropping says so, unless every row is finished.
void drop_finished_rows(models::DecoderState& state, std::vector<int64_t>& sentence_of_row,
                        std::vector<int32_t>& previous, int64_t& finished_rows) {
  const int64_t rows = int64_t(sentence_of_row.size());
  if (finished_rows == rows || !worth_dropping(finished_rows, rows)) return;
  std::vector<int64_t> keep_rows;
  for (int64_t r = 0; r < rows; ++r)
    if (sentence_of_row[r] != kFinished) keep_rows.push_back(r);
  state.select_rows(keep_rows);
  sentence_of_row = layers::select_rows(sentence_of_row, keep_rows);
  previous = layers::select_rows(previous, keep_rows);
  finished_rows = 0;
}

// One token per sentence per step until eos or the length limit: greedy search and sampling.
// choose(row, width, sentence, position) picks the next token from a row of log-probabilities,
// after the logits processors have forbidden what they forbid in it; a position within the
// sentence's prefix takes the prefix's token instead.
template <class Choose>
std::vector<Hypothesis> one_token_at_a_time(const models::Seq2SeqModel& model, const data::Batch& source,
                                            const SearchOptions& options, const OutputPrefixes& prefixes_asked,
                                            Choose choose) {
  Tape tape;
  NoGradScope no_grad(tape);
  layers::RunContext ctx{tape, false, nullptr, nullptr, options.precision};
  std::unique_ptr<models::DecoderState> state = model.start(ctx, source);

  std::vector<Hypothesis> result(source.size);
  std::vector<int64_t> sentence_of_row(source.size);  // per state row; kFinished: an idle row
  std::vector<int64_t> limits(source.size);
  for (int64_t b = 0; b < source.size; ++b) {
    sentence_of_row[b] = b;
    limits[b] = max_output_length(source.src_lengths[b], options);
  }
  std::vector<int32_t> previous(source.size, options.bos_id);  // per state row
  int64_t finished_rows = 0;
  LogitsProcessors processors(options);
  const OutputPrefixes prefixes = output_prefixes(options, prefixes_asked, source.size, model.target_vocab_size());

  while (finished_rows < int64_t(sentence_of_row.size())) {
    end_search_step();  // the encoder's or the previous step's temporaries are freed by now
    Tensor logits = model.step(ctx, *state, previous);  // (R, V)
    if (!processors.empty()) process_rows(processors, logits, sentence_of_row, result);
    ops::log_softmax_rows_in_place(logits);
    const int64_t width = logits.dim(1);
    for (size_t r = 0; r < sentence_of_row.size(); ++r) {
      const int64_t sentence = sentence_of_row[r];
      if (sentence == kFinished) continue;  // idle: its input stays what it was
      float* row = logits.data() + r * width;
      Hypothesis& hypothesis = result[sentence];
      const size_t position = hypothesis.tokens.size();
      const std::vector<int32_t>& prefix = prefixes[size_t(sentence)];
      const bool forced = position < prefix.size();
      if (!forced && !processors.empty()) processors.forbid(int64_t(r), row);
      const int32_t token = forced ? prefix[position] : choose(row, width, sentence, position);
      // Every token forbidden: the hypothesis ends.
      const bool forbidden = !forced && row[token] == kForbiddenLogProb;
      if (!forbidden) {
        hypothesis.tokens.push_back(token);
        hypothesis.log_prob += row[token];
        previous[r] = token;
      }
      if (forbidden || token == options.eos_id || int64_t(hypothesis.tokens.size()) >= limits[sentence]) {
        sentence_of_row[r] = kFinished;
        ++finished_rows;
      }
    }
    drop_finished_rows(*state, sentence_of_row, previous, finished_rows);
  }
  for (auto& hypothesis : result) hypothesis.score = hypothesis.log_prob;
  return result;
}

}  // namespace

std::vector<Hypothesis> greedy_search(const models::Seq2SeqModel& model, const data::Batch& source,
                                      const SearchOptions& options, const OutputPrefixes& prefixes) {
  // The first largest log-prob, as std::max_element finds it, but with a max that vectorises.
  return one_token_at_a_time(model, source, options, prefixes, [](const float* row, int64_t width, int64_t, size_t) {
    return static_cast<int32_t>(std::find(row, row + width, row_max(row, width)) - row);
  });
}

int32_t sample_token(const float* log_probs, int64_t width, const SamplingOptions& sampling, float u) {
  ATTN_CHECK(sampling.temperature > 0.f, "sampling temperature must be > 0, got ", sampling.temperature);
  ATTN_CHECK(sampling.top_p > 0.f && sampling.top_p <= 1.f, "sampling top_p must be in (0, 1], got ", sampling.top_p);
  // Candidates most likely first (ties: lower id first); only the top_k need ordering.
  std::vector<int32_t> ids(static_cast<size_t>(width));
  std::iota(ids.begin(), ids.end(), 0);
  const auto more_likely = [&](int32_t a, int32_t b) {
    return log_probs[a] > log_probs[b] || (log_probs[a] == log_probs[b] && a < b);
  };
  const int64_t k = sampling.top_k > 0 ? std::min<int64_t>(sampling.top_k, width) : width;
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), more_likely);
  ids.resize(static_cast<size_t>(k));
  // softmax(log_probs / T) over the candidates, relative to the most likely one.
  std::vector<double> weights(ids.size());
  double total = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    weights[i] = std::exp((double(log_probs[ids[i]]) - double(log_probs[ids[0]])) / sampling.temperature);
    total += weights[i];
  }
  // Nucleus: the fewest candidates whose probability reaches top_p.
  if (sampling.top_p < 1.f) {
    double mass = 0;
    size_t keep = 0;
    while (keep < weights.size() && mass < sampling.top_p * total) mass += weights[keep++];
    weights.resize(std::max<size_t>(keep, 1));
    total = std::accumulate(weights.begin(), weights.end(), 0.0);
  }
  double target = double(u) * total;
  for (size_t i = 0; i < weights.size(); ++i) {
    target -= weights[i];
    if (target < 0) return ids[i];
  }
  return ids[weights.size() - 1];  // u * total rounded up to the total
}

std::vector<Hypothesis> sample_search(const models::Seq2SeqModel& model, const data::Batch& source,
                                      const SearchOptions& options, const std::vector<uint64_t>& streams,
                                      const OutputPrefixes& prefixes) {
  ATTN_CHECK(int64_t(streams.size()) == source.size, "sample_search: ", streams.size(), " streams for ", source.size,
             " sentences");
  const SamplingOptions& sampling = options.sampling;
  return one_token_at_a_time(model, source, options, prefixes,
                             [&](const float* row, int64_t width, int64_t sentence, size_t position) {
                               const float u = uniform_at(mix64(sampling.seed, streams[size_t(sentence)]), position);
                               return sample_token(row, width, sampling, u);
                             });
}

}  // namespace attn::decode
