#include "data/training_stream.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <spdlog/spdlog.h>

#include "core/check.h"
#include "core/rng.h"

namespace attn::data {

struct TrainingStream::Setup {
  std::vector<CorpusFiles> corpora;
  std::vector<double> cumulative_weights;  // normalized, last = 1
  Vocab src_vocab, tgt_vocab;
  StreamOptions options;
};

namespace {

constexpr int64_t kRampWindows = 4;                     // windows 1-4 hold 1/16, 1/8, 1/4, 1/2 of buffer_pairs
constexpr size_t kEncodeChunk = 4096;                   // raw pairs held at once while a window is encoded
constexpr uint64_t kCorpusDraws = 0x636f72707573ull;    // separates the corpus draws from the batcher's
constexpr uint64_t kSamplingDraws = 0x73616d706c65ull;  // ... the segmentation draws
constexpr uint64_t kConcatDraws = 0x636f6e636174ull;    // ... and the concatenation draws

using Setup = TrainingStream::Setup;

// Text pairs waiting to be encoded, with their origin.
struct RawPairs {
  std::vector<std::string> src, tgt, links;  // links: the alignments line ("" without a file)
  std::vector<int64_t> line;
  std::vector<int32_t> corpus;

  size_t size() const { return src.size(); }
  void clear() {
    src.clear();
    tgt.clear();
    links.clear();
    line.clear();
    corpus.clear();
  }
};

// Encodes `raw` with `threads` threads and appends the kept pairs, in order, to `examples`.
// `raw` holds the pairs of window `serial` from its `first`-th: a sampled segmentation is keyed by
// (seed, serial, place in the window), so it is the same for any thread count and on resume, and
// differs from window to window (epoch to epoch).
void encode_into(const Setup& setup, const RawPairs& raw, int64_t serial, int64_t first, int threads,
                 PackedExamples& examples, WindowStats& stats) {
  const SegmentationSampling& sampling = setup.options.sampling;
  const uint64_t window_key = mix64(setup.options.batching.seed ^ kSamplingDraws, uint64_t(serial));
  const auto n = static_cast<int64_t>(raw.size());
  std::vector<Example> slots(n);
  std::vector<PairStatus> status(n);
  std::optional<std::string> failure;  // exceptions must not leave an OpenMP region
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64) if (threads > 1)
  for (int64_t i = 0; i < n; ++i) {
    try {
      status[i] = encode_example(raw.src[i], raw.tgt[i], setup.src_vocab, setup.tgt_vocab, setup.options.max_len,
                                 slots[i], sampling, mix64(window_key, uint64_t(first + i)));
    } catch (const std::exception& error) {
#pragma omp critical(attn_encode_window_failure)
      if (!failure)
        failure = setup.corpora[raw.corpus[i]].src + " line " + std::to_string(raw.line[i] + 1) + ": " + error.what();
      continue;
    }
    const std::string& alignments = setup.corpora[raw.corpus[i]].alignments;
    if (alignments.empty() || status[i] != PairStatus::kept) continue;
    try {
      slots[i].links = pair_links(raw.links[i], setup.options.alignment_level, raw.src[i], raw.tgt[i], slots[i].src,
                                  slots[i].tgt, setup.src_vocab, setup.tgt_vocab);
    } catch (const std::exception& error) {
#pragma omp critical(attn_encode_window_failure)
      if (!failure) failure = alignments + " line " + std::to_string(raw.line[i] + 1) + ": " + error.what();
    }
  }
  ATTN_CHECK(!failure, "encoding the training corpus: ", *failure);
  for (int64_t i = 0; i < n; ++i) {
    if (status[i] == PairStatus::too_long) ++stats.skipped_long;
    if (status[i] == PairStatus::empty) ++stats.skipped_empty;
    if (status[i] != PairStatus::kept) continue;
    slots[i].index = raw.line[i];
    slots[i].corpus = raw.corpus[i];
    examples.add(slots[i]);
  }
}

// The corpus of the next pair: a draw in proportion to the weights.
size_t draw_corpus(const Setup& setup, Rng& draws) {
  if (setup.corpora.size() == 1) return 0;
  const double u = draws.uniform_double();
  const auto& cumulative = setup.cumulative_weights;
  auto found = std::upper_bound(cumulative.begin(), cumulative.end(), u);
  return std::min<size_t>(size_t(found - cumulative.begin()), cumulative.size() - 1);
}

// Reads corpus `i`'s next pair into `raw`; a corpus at its end starts over first. Returns
// whether that completed the epoch (every corpus through `epoch` passes).
class CorpusReaders {
 public:
  CorpusReaders(const Setup& setup, std::vector<CorpusPosition> start) : setup_(setup), at_(std::move(start)) {
    for (size_t i = 0; i < at_.size(); ++i)
      readers_.emplace_back(setup.corpora[i].src, setup.corpora[i].tgt, at_[i].reader, setup.corpora[i].alignments);
  }

  void read(size_t i, RawPairs& raw) {
    if (readers_[i].at_end()) start_over(i);
    std::string src, tgt, links;
    ATTN_CHECK(readers_[i].next(src, tgt, &links), "the training corpus '", setup_.corpora[i].src, "' / '",
               setup_.corpora[i].tgt, "' has no lines");
    raw.src.push_back(std::move(src));
    raw.tgt.push_back(std::move(tgt));
    raw.links.push_back(std::move(links));
    raw.line.push_back(readers_[i].position().line - 1);
    raw.corpus.push_back(static_cast<int32_t>(i));
    if (readers_[i].at_end()) start_over(i);  // now, so that an epoch ends with its last pair
  }

  bool epoch_done(int64_t epoch) const {
    return std::all_of(at_.begin(), at_.end(), [&](const CorpusPosition& p) { return p.passes >= epoch; });
  }

  std::vector<CorpusPosition> positions() {
    for (size_t i = 0; i < at_.size(); ++i) at_[i].reader = readers_[i].position();
    return at_;
  }

 private:
  void start_over(size_t i) {
    ATTN_CHECK(!(readers_[i].position() == PairReaderPosition{}), "the training corpus '", setup_.corpora[i].src,
               "' / '", setup_.corpora[i].tgt, "' has no lines");
    ++at_[i].passes;
    readers_[i] = PairReader(setup_.corpora[i].src, setup_.corpora[i].tgt, {}, setup_.corpora[i].alignments);
  }

  const Setup& setup_;
  std::vector<CorpusPosition> at_;
  std::vector<PairReader> readers_;
};

std::vector<std::vector<int64_t>> plan_window(const PackedExamples& examples, const BatcherOptions& batching,
                                              int64_t serial) {
  std::vector<int32_t> lengths(examples.size());
  for (size_t i = 0; i < lengths.size(); ++i) lengths[i] = examples.length(i);
  return plan_batches(lengths, batching, serial);
}

// Window `serial` of epoch `epoch`, its readers starting at `start`. Returns early (an empty
// window) when `cancel` is set.
Window read_window(const Setup& setup, std::vector<CorpusPosition> start, int64_t serial, int64_t epoch, int threads,
                   const std::atomic<bool>* cancel) {
  const auto began = std::chrono::steady_clock::now();
  Window window;
  window.serial = serial;
  window.epoch = epoch;
  window.start = start;
  CorpusReaders readers(setup, std::move(start));
  Rng draws(mix64(setup.options.batching.seed ^ kCorpusDraws, uint64_t(serial)));
  auto examples = std::make_shared<PackedExamples>();
  RawPairs raw;
  const int64_t capacity = window_capacity(setup.options.buffer_pairs, serial);
  while (window.stats.read < capacity && !window.ends_epoch) {
    if (cancel && cancel->load(std::memory_order_relaxed)) return {};
    readers.read(draw_corpus(setup, draws), raw);
    ++window.stats.read;
    window.ends_epoch = readers.epoch_done(epoch);
    if (raw.size() == kEncodeChunk) {
      encode_into(setup, raw, serial, window.stats.read - int64_t(raw.size()), threads, *examples, window.stats);
      raw.clear();
      if (window.stats.read == int64_t(kEncodeChunk)) examples->reserve_like_so_far(size_t(capacity));
    }
  }
  encode_into(setup, raw, serial, window.stats.read - int64_t(raw.size()), threads, *examples, window.stats);
  examples->shrink_to_fit();
  if (setup.options.concat.on()) {
    const uint64_t seed = mix64(setup.options.batching.seed ^ kConcatDraws, uint64_t(serial));
    examples = std::make_shared<PackedExamples>(
        concatenate_pairs(*examples, setup.options.concat, setup.options.max_len, seed, window.stats.joined));
  }
  window.stats.kept = static_cast<int64_t>(examples->size());
  window.end = readers.positions();
  window.plan = plan_window(*examples, setup.options.batching, serial);
  window.examples = std::move(examples);
  window.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  return window;
}

// The window after `window` when that is the whole of a single corpus again: the same pairs,
// planned with the next window's draws. nullopt when the next window must be read.
std::optional<Window> reuse_whole_corpus(const Setup& setup, const Window& window) {
  // Sampled segmentations and joins are drawn per window: reusing them would repeat them.
  if (setup.options.sampling.on() || setup.options.concat.on()) return std::nullopt;
  const bool whole = setup.corpora.size() == 1 && window.ends_epoch && window.start[0].reader == PairReaderPosition{};
  if (!whole || window_capacity(setup.options.buffer_pairs, window.serial + 1) < window.stats.read) return std::nullopt;
  Window next;
  next.serial = window.serial + 1;
  next.epoch = window.epoch + 1;
  next.start = window.end;
  next.end = {CorpusPosition{{}, window.end[0].passes + 1}};
  next.ends_epoch = true;
  next.examples = window.examples;
  next.plan = plan_window(*next.examples, setup.options.batching, next.serial);
  next.stats = window.stats;
  next.stats.seconds = 0;
  return next;
}

std::string thousands(int64_t value) {
  std::string digits = std::to_string(value), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void log_window(const Setup& setup, const Window& window) {
  const WindowStats& s = window.stats;
  std::string where;
  for (size_t i = 0; i < setup.corpora.size(); ++i)
    where += fmt::format("{}{} line {} (pass {})", i ? ", " : "", setup.corpora[i].src,
                         thousands(window.end[i].reader.line), window.end[i].passes + 1);
  spdlog::info(
      "data window {} (epoch {}): {} pairs in {:.0f} MB, {} batches; {} skipped ({} longer than "
      "max_len={}, {} empty){}; read in {:.1f} s; next: {}",
      window.serial, window.epoch, thousands(s.kept), double(window.examples->bytes()) / (1 << 20),
      thousands(int64_t(window.plan.size())), thousands(s.skipped_long + s.skipped_empty), thousands(s.skipped_long),
      setup.options.max_len, thousands(s.skipped_empty),
      setup.options.concat.on() ? fmt::format("; {} joined", thousands(s.joined)) : "", s.seconds, where);
}

}  // namespace

int64_t window_capacity(int64_t buffer_pairs, int64_t serial) {
  const int64_t shift = std::max<int64_t>(0, kRampWindows - (serial - 1));  // window 1: / 16
  return std::max<int64_t>(1, buffer_pairs >> shift);
}

TrainingStream::TrainingStream(std::vector<CorpusFiles> corpora, const Vocab& src_vocab, const Vocab& tgt_vocab,
                               StreamOptions options) {
  ATTN_CHECK(!corpora.empty(), "TrainingStream: no corpus");
  ATTN_CHECK(options.buffer_pairs >= 1, "TrainingStream: buffer_pairs ", options.buffer_pairs, " must be positive");
  ATTN_CHECK(options.batching.batch_tokens > 0 && options.batching.pad_multiple >= 1,
             "TrainingStream: batch_tokens and pad_multiple must be positive");
  std::vector<double> cumulative;
  double total = 0;
  for (const CorpusFiles& corpus : corpora) {
    ATTN_CHECK(corpus.weight > 0, "TrainingStream: corpus '", corpus.src, "' has weight ", corpus.weight,
               "; weights must be positive");
    total += corpus.weight;
  }
  double sum = 0;
  for (const CorpusFiles& corpus : corpora) cumulative.push_back((sum += corpus.weight) / total);
  cumulative.back() = 1.0;
  const size_t count = corpora.size();
  setup_ =
      std::make_shared<const Setup>(Setup{std::move(corpora), std::move(cumulative), src_vocab, tgt_vocab, options});
  pending_.start.assign(count, CorpusPosition{});
  pending_.pairs_seen.assign(count, 0);
  pairs_seen_ = pending_.pairs_seen;
}

TrainingStream::~TrainingStream() { abandon_read_ahead(); }

const std::vector<CorpusFiles>& TrainingStream::corpora() const { return setup_->corpora; }

void TrainingStream::load() {
  if (loaded_) return;
  Window window =
      read_window(*setup_, pending_.start, pending_.window, pending_.epoch, setup_->options.threads, nullptr);
  ATTN_CHECK(pending_.batch_in_window <= int64_t(window.plan.size()), "the data position (batch ",
             pending_.batch_in_window, " of window ", pending_.window, ") lies beyond the window's ",
             window.plan.size(), " batches: the corpus files changed since the checkpoint was written");
  // A fresh stream that ends a whole epoch without a pair would loop for ever.
  epoch_ends_without_pairs_ = pending_.window == 1 ? 1 : 0;
  start_at(std::move(window));
  batch_in_window_ = pending_.batch_in_window;
  pairs_seen_ = pending_.pairs_seen;
}

void TrainingStream::start_at(Window window) {
  if (window.stats.kept > 0) epoch_ends_without_pairs_ = 0;
  current_ = std::move(window);
  batch_in_window_ = 0;
  loaded_ = true;
  log_window(*setup_, current_);
  read_ahead();
}

void TrainingStream::read_ahead() {
  std::optional<Window> reused = reuse_whole_corpus(*setup_, current_);
  if (reused) {
    std::promise<Window> ready;
    ready.set_value(std::move(*reused));
    ahead_ = ready.get_future();
    return;
  }
  cancel_ahead_ = std::make_shared<std::atomic<bool>>(false);
  const int64_t epoch = current_.ends_epoch ? current_.epoch + 1 : current_.epoch;
  // One thread: the trainer's threads keep the cores; a window lasts far longer than its reading.
  ahead_ = std::async(std::launch::async, [setup = setup_, start = current_.end, serial = current_.serial + 1, epoch,
                                           cancel = cancel_ahead_] {
    return read_window(*setup, start, serial, epoch, /*threads=*/1, cancel.get());
  });
}

void TrainingStream::abandon_read_ahead() {
  if (!ahead_.valid()) return;
  if (cancel_ahead_) cancel_ahead_->store(true);
  ahead_.wait();
  ahead_ = {};
}

void TrainingStream::advance() {
  if (current_.ends_epoch) {
    ATTN_CHECK(++epoch_ends_without_pairs_ < 2,
               "no training pair is left after filtering: every pair of the "
               "training corpus has a side longer than max_len (",
               setup_->options.max_len, " tokens) or a side without tokens");
  }
  start_at(ahead_.get());  // rethrows what reading it threw
}

Batch TrainingStream::next() {
  load();
  while (batch_in_window_ == int64_t(current_.plan.size())) advance();
  const std::vector<int64_t>& positions = current_.plan[batch_in_window_];
  std::vector<Example> rows;
  rows.reserve(positions.size());
  for (int64_t position : positions) rows.push_back(current_.examples->unpack(size_t(position)));
  std::vector<const Example*> pointers;
  for (const Example& row : rows) pointers.push_back(&row);
  Batch batch = make_batch(pointers, setup_->options.batching.pad_multiple);
  ++batch_in_window_;
  for (const Example& row : rows) ++pairs_seen_[size_t(row.corpus)];
  return batch;
}

int64_t TrainingStream::epoch() const {
  if (!loaded_) return pending_.epoch;
  const bool finished = batch_in_window_ == int64_t(current_.plan.size()) && current_.ends_epoch;
  return current_.epoch + (finished ? 1 : 0);
}

StreamPosition TrainingStream::position() const {
  if (!loaded_) return pending_;
  return {current_.serial, current_.epoch, batch_in_window_, current_.start, pairs_seen_};
}

void TrainingStream::set_position(const StreamPosition& position) {
  const size_t count = setup_->corpora.size();
  ATTN_CHECK(position.start.size() == count && position.pairs_seen.size() == count, "the data position names ",
             position.start.size(), " training corpora but the config has ", count,
             "; resume with the corpora the run began with");
  ATTN_CHECK(position.window >= 1 && position.epoch >= 1 && position.batch_in_window >= 0, "the data position (window ",
             position.window, ", epoch ", position.epoch, ", batch ", position.batch_in_window, ") is impossible");
  abandon_read_ahead();
  pending_ = position;
  loaded_ = false;
}

}  // namespace attn::data
