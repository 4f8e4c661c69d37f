#include "train/trainer.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <spdlog/spdlog.h>

#include "core/buffer_pool.h"
#include "core/parallel.h"
#include "core/process_memory.h"
#include "core/rng.h"
#include "core/stop_signal.h"
#include "data/training_stream.h"
#include "dist/communicator.h"
#include "dnnl/context.h"
#include "io/checkpoint.h"
#include "models/model_factory.h"
#include "optim/ema.h"
#include "train/checkpoint_writer.h"
#include "train/ema_weights.h"
#include "train/input_files.h"
#include "train/progress_log.h"
#include "train/run_directory.h"
#include "train/train_state.h"
#include "train/train_step.h"
#include "train/training_schedule.h"
#include "train/validator.h"

namespace attn::train {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Sums over the steps since the last progress line.
struct Window {
  double loss = 0, nll = 0, allreduce_seconds = 0, guided_loss = 0;
  int64_t tokens = 0, steps = 0, guided_rows = 0;
  Clock::time_point start = Clock::now();
};

class TrainingRun {
 public:
  TrainingRun(const io::Config& config, const TrainOptions& options, StartMode mode);
  void run();

 private:
  void load_resume_state();
  void synchronize_ranks();
  StepStats train_step();
  std::vector<data::Batch> next_group();
  void log_pairs_seen() const;
  void sum_over_ranks(StepStats& stats);
  void report(const StepStats& stats);
  bool validate();  // returns false when patience ran out
  void save_last();
  bool limit_reached() const { return schedule_.limit_reached(state_.step, stream_->epoch(), elapsed()); }
  double elapsed() const { return state_.elapsed_seconds + seconds_since(session_start_); }
  Rng dropout_rng_for(int64_t step) const;

  dist::Communicator& world_ = dist::world();
  io::Config config_;
  TrainOptions options_;
  TrainingSchedule schedule_{config_.train};
  run::RunPaths paths_;
  std::optional<io::FileLock> lock_;  // rank 0's, held while the run lasts
  std::string run_id_;                // rank 0's: written into every checkpoint
  run::Vocabularies vocab_;
  std::unique_ptr<data::TrainingStream> stream_;
  std::unique_ptr<models::Seq2SeqModel> model_;
  std::unique_ptr<TrainStep> step_;
  std::unique_ptr<optim::Ema> ema_;  // train.ema_decay > 0
  std::unique_ptr<Validator> validator_;
  std::unique_ptr<ProgressLog> log_;
  std::unique_ptr<CheckpointWriter> checkpoints_;
  TrainState state_;  // state_.data: the stream's position after the last step taken
  uint64_t dropout_seed_;
  Window window_;
  Clock::time_point session_start_ = Clock::now();
};

// Rank 0 opens the run directory (lock, config, vocabulary) and keeps its lock in `lock` and the
// run's id in `run_id`; the other ranks wait for it, then read the vocabulary from it
// (output_dir must be on a file system every rank sees).
run::Vocabularies open_on_ranks(const io::Config& config, const run::RunPaths& paths, StartMode mode,
                                dist::Communicator& world, std::optional<io::FileLock>& lock, std::string& run_id) {
  if (!world.is_root()) {
    world.barrier();
    return run::load_vocabularies(paths);
  }
  OpenedRun opened = open_run_directory(config, paths, mode);
  lock = std::move(opened.lock);
  run_id = std::move(opened.run_id);
  world.barrier();
  return std::move(opened.vocab);
}

StartMode start_mode(const TrainOptions& options) {
  ATTN_CHECK(!(options.resume && options.restart),
             "--resume and --restart exclude each other: --resume continues the run, --restart starts a new one");
  return options.resume ? StartMode::resume : options.restart ? StartMode::restart : StartMode::fresh;
}

// A checkpoint from before streaming data knows only its epoch: continue at that epoch's start.
data::StreamPosition position_to_resume(const data::StreamPosition& saved, size_t corpora) {
  if (!saved.start.empty()) return saved;
  spdlog::warn(
      "the checkpoint predates streaming data: training continues at the start of epoch {}, with other "
      "batches than the interrupted run would have seen",
      saved.epoch);
  data::StreamPosition position;
  position.epoch = saved.epoch;
  position.start.assign(corpora, data::CorpusPosition{{}, saved.epoch - 1});
  position.pairs_seen.assign(corpora, 0);
  return position;
}

TrainingRun::TrainingRun(const io::Config& config, const TrainOptions& options, StartMode mode)
    : config_(config),
      options_(options),
      paths_(run::run_paths(config.output_dir, config.vocab.joint)),
      vocab_(open_on_ranks(config, paths_, mode, world_, lock_, run_id_)),
      // Each rank its own dropout stream: its rows are other sentences than rank 0's.
      dropout_seed_(mix64(static_cast<uint64_t>(config.train.seed) * 0x9e3779b97f4a7c15ull + 1, world_.rank())) {
  stream_ = make_training_stream(config, vocab_);
  model_ = models::make_model(config, {vocab_.source.size(), vocab_.target.size()});
  step_ = std::make_unique<TrainStep>(*model_, config, training_precision(config.train.precision, world_));
  if (config.train.ema_decay > 0)
    ema_ = std::make_unique<optim::Ema>(model_->parameters(), float(config.train.ema_decay));
  if (world_.is_root()) {
    validator_ = std::make_unique<Validator>(config, vocab_);
    log_ = std::make_unique<ProgressLog>(paths_.log);
    checkpoints_ = std::make_unique<CheckpointWriter>(config_, paths_, vocab_.digests, run_id_);
  }
  spdlog::info("model: {} with {} parameters", model_->family(), model_->parameters().parameter_count());
  // auto records what it measured and chose; a precision asked by name needs no record.
  if (log_ && config.train.precision == Precision::automatic) log_->write_precision(step_->precision_choice());
  if (world_.size() > 1)
    spdlog::info("data-parallel over {} ranks: each takes its share of every batch", world_.size());
  if (options.resume) load_resume_state();
  synchronize_ranks();
  // The state (fresh, resumed or rank 0's) decides where Adam and the data stand.
  step_->adam().set_step_count(state_.optimizer_steps);
  if (options.resume) stream_->set_position(position_to_resume(state_.data, stream_->corpora().size()));
  stream_->load();  // the first window, before the clock of tokens/s starts
  state_.data = stream_->position();
}

void TrainingRun::load_resume_state() {
  io::Checkpoint checkpoint = io::load_checkpoint(paths_.last_checkpoint);  // its vocabulary checked on opening
  io::load_parameters(checkpoint, model_->parameters());
  io::load_extra(checkpoint, "optimizer.m", step_->adam().first_moment());
  io::load_extra(checkpoint, "optimizer.v", step_->adam().second_moment());
  if (ema_) {
    if (checkpoint.extras.count(CheckpointWriter::ema_tensor())) {
      io::load_extra(checkpoint, CheckpointWriter::ema_tensor(), ema_->average());
    } else {
      spdlog::warn("{} has no moving average of the weights (train.ema_decay was 0): it starts from the weights now",
                   paths_.last_checkpoint);
      ema_ = std::make_unique<optim::Ema>(model_->parameters(), float(config_.train.ema_decay));
    }
  }
  state_ = train_state_of(checkpoint);
  spdlog::info("resumed from {} at step {} (epoch {})", paths_.last_checkpoint, state_.step, state_.data.epoch);
}

// Every rank starts from rank 0's parameters and optimizer state (the same seed already gives
// the same initialization, and every rank reads the same checkpoint on --resume; this makes it
// so whatever the file system showed each rank).
void TrainingRun::synchronize_ranks() {
  if (world_.size() == 1) return;
  ParameterStore& parameters = model_->parameters();
  world_.broadcast(parameters.values(), int64_t(parameters.size() * sizeof(float)), 0);
  std::vector<Tensor> tensors = {step_->adam().first_moment(), step_->adam().second_moment()};
  if (ema_) tensors.push_back(ema_->average());
  for (Tensor tensor : tensors) world_.broadcast(tensor.data(), tensor.numel() * int64_t(sizeof(float)), 0);
  nlohmann::json state = nlohmann::json::parse(world_.broadcast_string(state_.to_json().dump()));
  state_ = TrainState::from_json(state);
}

// Dropout masks of step `step` (from 1): a fixed window of the rank's stream, so a resumed run
// draws what an uninterrupted one would, whatever the shapes of earlier steps.
Rng TrainingRun::dropout_rng_for(int64_t step) const { return Rng(dropout_seed_, uint64_t(step) << 32); }

// Adds up the step's statistics and gradients over the ranks, so that every rank holds the
// gradient of the whole batch group (each rank already scaled by the group's token count).
void TrainingRun::sum_over_ranks(StepStats& stats) {
  if (world_.size() == 1) return;
  Clock::time_point start = Clock::now();
  ParameterStore& parameters = model_->parameters();
  world_.sum(parameters.grads(), int64_t(parameters.size()));
  double sums[5] = {stats.loss, stats.nll, double(stats.tokens), stats.guided_loss, double(stats.guided_rows)};
  world_.sum(sums, 5);
  stats.loss = sums[0];
  stats.nll = sums[1];
  stats.tokens = int64_t(sums[2]);
  stats.guided_loss = sums[3];
  stats.guided_rows = int64_t(sums[4]);
  stats.allreduce_seconds = seconds_since(start);
}

// The batches of the next step. A corpus error (files of different lengths, unreadable) stops
// the run, after saving what was trained so far: the checkpoint's data position is that of the
// last step taken, so --resume continues there once the files are fixed.
std::vector<data::Batch> TrainingRun::next_group() {
  std::vector<data::Batch> group;
  try {
    for (int i = 0; i < config_.train.accumulate; ++i) group.push_back(stream_->next());
  } catch (const Error& error) {
    if (!world_.is_root() || state_.step == 0) throw;
    save_last();
    throw Error(
        fmt::format("step {}: {}. The run stopped; {} holds every step so far: fix the files, then continue "
                    "with attn-train --config ... --resume",
                    state_.step, error.what(), paths_.last_checkpoint));
  }
  return group;
}

StepStats TrainingRun::train_step() {
  std::vector<data::Batch> group = next_group();
  int64_t group_tokens = 0, group_linked_rows = 0;
  for (data::Batch& batch : group) {
    // Every rank reads the same batches and trains on its share of each.
    group_tokens += batch.tgt_tokens;
    group_linked_rows += data::linked_target_rows(batch);
    if (world_.size() > 1) batch = data::shard(batch, world_.rank(), world_.size());
  }
  Rng dropout_rng = dropout_rng_for(state_.step + 1);
  // Seeded with the token count of all ranks' shares, so the sum over ranks is the mean.
  StepStats stats = step_->accumulate(group, group_tokens, dropout_rng, group_linked_rows);
  sum_over_ranks(stats);
  if (options_.after_backward) options_.after_backward(state_.step + 1, model_->parameters());
  step_->update(stats, state_.step + 1);
  if (ema_ && stats.finite) ema_->update();  // a skipped step changed no weight
  state_.data = stream_->position();
  return stats;
}

void TrainingRun::log_pairs_seen() const {
  const auto& corpora = stream_->corpora();
  if (corpora.size() < 2) return;
  const std::vector<int64_t>& seen = stream_->pairs_seen();
  int64_t total = 0;
  for (int64_t count : seen) total += count;
  std::string shares;
  for (size_t i = 0; i < corpora.size(); ++i)
    shares += fmt::format("{}{} {} ({:.1f}%)", i ? ", " : "", corpora[i].src, seen[i],
                          100.0 * double(seen[i]) / double(std::max<int64_t>(total, 1)));
  spdlog::info("pairs seen per corpus: {}", shares);
}

void TrainingRun::report(const StepStats& stats) {
  window_.loss += stats.loss;
  window_.nll += stats.nll;
  window_.tokens += stats.tokens;
  window_.allreduce_seconds += stats.allreduce_seconds;
  window_.guided_loss += stats.guided_loss;
  window_.guided_rows += stats.guided_rows;
  ++window_.steps;
  if (!schedule_.log_at(state_.step)) return;
  double seconds = seconds_since(window_.start);
  dnn::PrimitiveCache& cache = dnn::Context::get().cache();
  TrainProgress progress;
  progress.step = state_.step;
  progress.epoch = stream_->epoch();
  progress.pairs_seen = stream_->pairs_seen();
  progress.loss = window_.loss / std::max<int64_t>(window_.tokens, 1);
  progress.perplexity = std::exp(window_.nll / std::max<int64_t>(window_.tokens, 1));
  progress.learning_rate = step_->learning_rate(state_.step);
  progress.grad_norm = stats.grad_norm;
  if (config_.train.guided_alignment.on())
    progress.guided_loss = window_.guided_loss / double(std::max<int64_t>(window_.guided_rows, 1));
  progress.tokens_per_second = window_.tokens / std::max(seconds, 1e-9);
  progress.primitive_cache_hit_rate = cache.hit_rate();
  progress.elapsed_seconds = elapsed();
  progress.skipped_steps = state_.skipped_steps;
  progress.rss_mb = resident_mb();
  const BufferPool::Stats pool = BufferPool::instance().stats();
  progress.pool_live_mb = double(pool.live_bytes) / double(1 << 20);
  progress.pool_cached_mb = double(pool.cached_bytes) / double(1 << 20);
  progress.primitive_cache_entries = int64_t(cache.size());
  progress.ranks = world_.size();
  progress.allreduce_seconds_per_step = window_.allreduce_seconds / window_.steps;
  progress.eta_seconds = schedule_.eta_seconds(state_.step, seconds / window_.steps, progress.elapsed_seconds);
  log_->write_train(progress);
  window_ = Window{};
  cache.reset_counters();  // the hit rate is per window: after warm-up it should stay near 100%
}

bool TrainingRun::validate() {
  log_pairs_seen();
  EmaWeights ema_weights(ema_.get());  // validated and saved as checkpoint.best when on
  step_->refresh_matmul_weights();     // bf16: the copies of the weights validated
  ValidationResult result = validator_->run(*model_, step_->precision());
  double metric = result.metric(config_.train.valid_metric);
  bool improved = std::isnan(state_.best_metric) || metric > state_.best_metric;
  if (improved) {
    state_.best_metric = metric;
    state_.best_step = state_.step;
    state_.validations_without_improvement = 0;
    checkpoints_->save_best(model_->parameters(), state_.step);
  } else {
    ++state_.validations_without_improvement;
  }
  log_->write_valid(state_.step, result, improved, elapsed());
  return schedule_.patience_left(state_.validations_without_improvement);
}

void TrainingRun::save_last() {
  state_.optimizer_steps = step_->adam().step_count();
  TrainState saved = state_;
  saved.elapsed_seconds = elapsed();
  checkpoints_->save_last(model_->parameters(), step_->adam(), ema_.get(), saved);
}

void TrainingRun::run() {
  install_stop_handlers();
  window_ = Window{};  // tokens/s counts training only, not corpus loading
  // Ranks decide together (all must want to go on), so they stop at the same step.
  bool keep_going = world_.all(!limit_reached());
  while (keep_going) {
    StepStats stats = train_step();
    ++state_.step;
    state_.target_tokens += stats.tokens;
    if (!stats.finite) {
      ++state_.skipped_steps;
      ATTN_CHECK(++state_.nonfinite_in_a_row < config_.train.max_nonfinite_steps, "step ", state_.step, ": ",
                 state_.nonfinite_in_a_row,
                 " steps in a row had a non-finite loss or gradient (train.max_nonfinite_steps ", "is ",
                 config_.train.max_nonfinite_steps, "); stopping. ",
                 fs::exists(paths_.last_checkpoint) ? "The last good checkpoint is " + paths_.last_checkpoint
                                                    : std::string("No checkpoint was saved"),
                 ". Try a lower train.learning_rate or train.clip_norm.");
      spdlog::warn("step {}: non-finite loss or gradient, step skipped", state_.step);
    } else {
      state_.nonfinite_in_a_row = 0;
    }
    // Before the log record reads rss_mb, and on every rank: what batches and validation freed
    // goes back to the kernel instead of holding the run's footprint at its high-water mark.
    if (schedule_.log_at(state_.step)) release_free_memory();
    if (world_.is_root()) {
      report(stats);
      if (schedule_.validate_at(state_.step)) keep_going = validate();
    }
    keep_going = world_.all(keep_going && !limit_reached() && !stop_requested());
    if (world_.is_root() && schedule_.save_at(state_.step, !keep_going)) save_last();
  }
  const bool stopped_by_signal = !world_.all(!stop_requested());
  if (!world_.is_root()) return;
  if (stopped_by_signal) {
    spdlog::info("stopped by signal at step {}; checkpoint saved. Continue with: attn-train --config ... --resume",
                 state_.step);
    return;
  }
  if (!schedule_.validate_at(state_.step)) validate();
  // The metric is stored oriented so that higher is better: loss is kept negated.
  double best = config_.train.valid_metric == ValidMetric::loss ? -state_.best_metric : state_.best_metric;
  spdlog::info("training finished at step {} after {}; best {} {:.2f} at step {}", state_.step,
               rounded_duration(elapsed()), choice_name(config_.train.valid_metric), best, state_.best_step);
}

}  // namespace

void train(const io::Config& config, const TrainOptions& options) {
  // First, before any other thread starts: every thread of the run inherits the mask.
  const StopSignalRouting stop_signals;
  if (!dist::world().is_root()) spdlog::set_level(spdlog::level::err);  // rank 0 speaks for the run
  const StartMode mode = start_mode(options);
  check_can_start(run::run_paths(config.output_dir, config.vocab.joint), mode);
  check_input_files(config, options.count_lines_up_to);
  set_parallel_threads(config.train.threads);
  TrainingRun run(config, options, mode);
  run.run();
}

}  // namespace attn::train
