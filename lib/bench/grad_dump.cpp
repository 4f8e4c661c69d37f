#include "bench/grad_dump.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <spdlog/fmt/fmt.h>

#include "core/check.h"
#include "data/batch.h"
#include "data/pair_concat.h"
#include "data/vocab.h"
#include "io/safetensors.h"
#include "models/model_factory.h"
#include "ops/precision.h"
#include "run/run_files.h"
#include "train/input_files.h"
#include "train/train_step.h"

namespace attn::bench {

namespace {

// The tensors of the dump, each owning its bytes until the write (io::TensorEntry only views them).
class DumpTensors {
 public:
  template <class T>
  void add(const std::string& name, io::ElementType type, const Shape& shape, const T* values) {
    ATTN_CHECK(element_size(type) == sizeof(T), "grad dump: ", name, " stored with the wrong element size");
    const size_t bytes = size_t(numel(shape)) * sizeof(T);
    owned_.push_back({name, type, shape, std::vector<char>(bytes)});
    if (bytes > 0) std::memcpy(owned_.back().bytes.data(), values, bytes);
  }
  void add_f32(const std::string& name, const Tensor& tensor) {
    ATTN_CHECK(tensor.dtype() == DType::f32, "grad dump: ", name, " is ", dtype_name(tensor.dtype()), ", not f32");
    add(name, io::ElementType::f32, tensor.shape(), tensor.data());
  }
  void add_scalar(const std::string& name, double value) {
    const float single = float(value);
    add(name, io::ElementType::f32, {}, &single);
  }
  void add_i32(const std::string& name, const Shape& shape, const std::vector<int32_t>& values) {
    ATTN_CHECK(int64_t(values.size()) == numel(shape), "grad dump: ", name, " has ", values.size(), " values");
    add(name, io::ElementType::i32, shape, values.data());
  }

  std::vector<io::TensorEntry> entries() const {
    std::vector<io::TensorEntry> entries;
    for (const Owned& tensor : owned_)
      entries.push_back({tensor.name, tensor.type, tensor.shape, tensor.bytes.data(), tensor.bytes.size()});
    return entries;
  }

 private:
  struct Owned {
    std::string name;
    io::ElementType type;
    Shape shape;
    std::vector<char> bytes;
  };
  std::vector<Owned> owned_;
};

// Dropout draws from a generator that an independent implementation does not share: off, the
// step is a function of the parameters and the batch alone.
void switch_off_dropout(io::Config& config) {
  config.model.transformer.dropout = 0;
  config.model.transformer.attention_dropout = 0;
  config.model.rnn.dropout = 0;
}

// Reference links of a `source` x `target` text (eos excluded): the diagonal, a second source
// piece on even target positions (rows that share their weight), the last target piece of odd
// sentences unlinked (rows the guided loss skips).
data::PieceLinks diagonal_links(int64_t sentence, int64_t source, int64_t target) {
  data::PieceLinks links;
  const int64_t linked = sentence % 2 == 1 ? target - 1 : target;
  for (int64_t t = 0; t < linked; ++t) {
    const int64_t s = t * source / target;
    links.emplace_back(int32_t(s), int32_t(t));
    if (t % 2 == 0 && s + 1 < source) links.emplace_back(int32_t(s + 1), int32_t(t));
  }
  return links;
}

// Sentence b: random ids above the special ones, lengths falling from the longest (so the batch
// has padding), eos last.
data::Example synthetic_example(int64_t b, const GradDumpOptions& options, int64_t vocab, Rng& rng) {
  data::Example example;
  example.index = b;
  const int64_t source = std::max<int64_t>(2, options.source_length - b);
  const int64_t target = std::max<int64_t>(2, options.target_length - (b + 1) / 2);
  auto token = [&] { return int32_t(data::kEosId + 1 + int64_t(rng.below(uint64_t(vocab - data::kEosId - 1)))); };
  for (int64_t i = 0; i + 1 < source; ++i) example.src.push_back(token());
  for (int64_t i = 0; i + 1 < target; ++i) example.tgt.push_back(token());
  example.src.push_back(data::kEosId);
  example.tgt.push_back(data::kEosId);
  example.links = diagonal_links(b, source - 1, target - 1);
  return example;
}

std::vector<data::Example> synthetic_examples(const io::Config& config, const GradDumpOptions& options) {
  Rng rng(static_cast<uint64_t>(config.train.seed));
  std::vector<data::Example> examples;
  for (int64_t b = 0; b < options.batch_sentences; ++b)
    examples.push_back(synthetic_example(b, options, config.vocab.size, rng));
  if (config.data.concat_prob <= 0) return examples;
  data::PackedExamples packed;
  for (const data::Example& example : examples) packed.add(example);
  int64_t joined = 0;
  packed = data::concatenate_pairs(packed, {config.data.concat_prob, config.data.concat_max}, config.data.max_len,
                                   static_cast<uint64_t>(config.train.seed), joined);
  for (size_t i = 0; i < packed.size(); ++i) examples[i] = packed.unpack(i);
  return examples;
}

data::Batch synthetic_batch(const io::Config& config, const GradDumpOptions& options) {
  const std::vector<data::Example> examples = synthetic_examples(config, options);
  std::vector<const data::Example*> pointers;
  for (const data::Example& example : examples) pointers.push_back(&example);
  data::Batch batch = data::make_batch(pointers, config.train.pad_multiple);
  if (!config.train.guided_alignment.on())
    for (data::PieceLinks& links : batch.links) links.clear();
  return batch;
}

// The batch of the step and the vocabulary sizes of the model.
struct StepInput {
  data::Batch batch;
  models::VocabSizes vocab;
};

StepInput step_input(const io::Config& config, const GradDumpOptions& options) {
  if (!options.corpus) return {synthetic_batch(config, options), {config.vocab.size, config.vocab.size}};
  const run::Vocabularies vocab = run::load_vocabularies(run::run_paths(config.output_dir, config.vocab.joint));
  data::Batch batch = train::make_training_stream(config, vocab)->next();
  return {std::move(batch), {vocab.source.size(), vocab.target.size()}};
}

// The batch under the names of docs/ARCHITECTURE.md ("Gradient dumps"); links as (N, 3) rows.
void add_batch(DumpTensors& dump, const data::Batch& batch) {
  dump.add_i32("src", {batch.size, batch.src_len}, batch.src);
  dump.add_i32("src_lengths", {batch.size}, batch.src_lengths);
  dump.add_i32("tgt_in", {batch.size, batch.tgt_len}, batch.tgt_in);
  dump.add_i32("tgt_out", {batch.size, batch.tgt_len}, batch.tgt_out);
  dump.add_i32("tgt_lengths", {batch.size}, batch.tgt_lengths);
  std::vector<int32_t> links;
  for (size_t b = 0; b < batch.links.size(); ++b)
    for (const data::PieceLink& link : batch.links[b]) links.insert(links.end(), {int32_t(b), link.first, link.second});
  dump.add_i32("links", {int64_t(links.size() / 3), 3}, links);
}

enum class ParameterPart { values, grads };

void add_parameters(DumpTensors& dump, const std::string& prefix, const ParameterStore& store, ParameterPart part) {
  for (const NamedParameter& parameter : store.parameters())
    dump.add_f32(prefix + parameter.name, part == ParameterPart::values ? parameter.tensor : parameter.tensor.grad());
}

// The batches of one optimizer step: `parts` contiguous runs of sentences of the same shape.
std::vector<data::Batch> accumulated_parts(const data::Batch& batch, int parts) {
  ATTN_CHECK(parts >= 1 && parts <= batch.size, "grad dump: train.accumulate ", parts, " must be 1..", batch.size,
             " (the sentences of the batch)");
  std::vector<data::Batch> batches;
  for (int i = 0; i < parts; ++i) batches.push_back(data::shard(batch, i, parts));
  return batches;
}

// The teacher-forced logits at the step's precision, off the tape.
Tensor logits_of(const models::Seq2SeqModel& model, const data::Batch& batch, Precision precision) {
  Tape tape;
  tape.set_recording(false);
  Rng unused(0);
  layers::RunContext ctx{tape, true, &unused, nullptr, precision};
  return model.forward(ctx, batch);
}

std::map<std::string, std::string> dump_metadata(const io::Config& config, const train::TrainStep& step,
                                                 const GradDumpOptions& options) {
  return {{"format", "attn-grad-dump/1"},
          {"config", io::config_to_json(config).dump()},
          {"precision", choice_name(step.precision())},
          {"loss_kernel", options.unfused_loss ? "unfused" : "fused"},
          {"batch", options.corpus ? "corpus" : "synthetic"},
          {"steps", "3"},
          {"pad_id", std::to_string(data::kPadId)}};
}

}  // namespace

GradDumpResult write_grad_dump(io::Config config, const GradDumpOptions& options) {
  ATTN_CHECK(!options.output.empty(), "grad dump: no output file (--output)");
  // A mistyped --output must not replace a checkpoint or an earlier dump.
  ATTN_CHECK(options.force || !std::filesystem::exists(options.output), "--output ", options.output,
             " exists; choose another file, or --force to replace it");
  ATTN_CHECK(options.batch_sentences >= 1 && options.source_length >= 2 && options.target_length >= 2,
             "grad dump: need >= 1 sentence of >= 2 source and target tokens; got ", options.batch_sentences, " of ",
             options.source_length, " x ", options.target_length);
  ATTN_CHECK(config.train.precision == Precision::f32 || config.train.precision == Precision::bf16,
             "grad dump: train.precision must be f32 or bf16 (auto would measure which is faster), got ",
             choice_name(config.train.precision));
  switch_off_dropout(config);
  const StepInput input = step_input(config, options);
  const data::Batch& batch = input.batch;
  auto model = models::make_model(config, input.vocab);
  train::TrainStep step(*model, config, ops::resolve_precision(config.train.precision, "train.precision"),
                        options.unfused_loss ? models::LossKernel::unfused : models::LossKernel::fused);
  const std::vector<data::Batch> parts = accumulated_parts(batch, config.train.accumulate);
  const int64_t linked_rows = config.train.guided_alignment.on() ? data::linked_target_rows(batch) : 0;

  DumpTensors dump;
  add_batch(dump, batch);
  ParameterStore& parameters = model->parameters();
  add_parameters(dump, "param.", parameters, ParameterPart::values);
  step.refresh_matmul_weights();
  dump.add_f32("logits", logits_of(*model, batch, step.precision()));

  Rng dropout_rng(static_cast<uint64_t>(config.train.seed));  // drawn from by no dropout (all off)
  train::StepStats first = step.accumulate(parts, batch.tgt_tokens, dropout_rng, linked_rows);
  add_parameters(dump, "grad.", parameters, ParameterPart::grads);
  step.update(first, 1);
  add_parameters(dump, "step1.", parameters, ParameterPart::values);
  for (int64_t later = 2; later <= 3; ++later) {
    train::StepStats stats = step.accumulate(parts, batch.tgt_tokens, dropout_rng, linked_rows);
    step.update(stats, later);
  }
  add_parameters(dump, "step3.", parameters, ParameterPart::values);

  const double tokens = double(first.tokens);
  dump.add_scalar("loss", first.loss / tokens);
  dump.add_scalar("nll", first.nll / tokens);
  dump.add_scalar("grad_norm", first.grad_norm);
  if (linked_rows > 0) dump.add_scalar("guided_loss", first.guided_loss / double(first.guided_rows));
  io::write_safetensors(options.output, dump.entries(), dump_metadata(config, step, options));
  return {int64_t(parameters.parameter_count()), first.loss / tokens, first.grad_norm};
}

std::string GradDumpResult::to_text(const std::string& path) const {
  return fmt::format("{}: {} parameters | loss {:.6f} per target token | gradient norm {:.6f}", path, parameters, loss,
                     grad_norm);
}

}  // namespace attn::bench
