#include "decode/attention_dump.h"

#include <algorithm>
#include <map>

#include "core/check.h"
#include "data/batch.h"
#include "decode/translator.h"

namespace attn::decode {

namespace {

using layers::AttentionKind;

bool selected(const layers::AttentionMap& map, const AttentionSelection& selection) {
  return (!selection.kind || map.kind == *selection.kind) && (!selection.layer || map.layer == *selection.layer);
}

// The real (queries, keys) of row b of a map of `kind`.
std::pair<int64_t, int64_t> real_extent(AttentionKind kind, const data::Batch& batch, int64_t b) {
  int64_t source = batch.src_lengths[b], target = batch.tgt_lengths[b];
  switch (kind) {
    case AttentionKind::encoder_self:
      return {source, source};
    case AttentionKind::decoder_self:
      return {target, target};
    case AttentionKind::cross:
      break;
  }
  return {target, source};
}

// Row b of `values` (a map (B, H, Tq, Tk), flat) at its real positions, with the selected heads
// kept, or their mean.
SentenceMap cut_map(const layers::AttentionMap& map, const std::vector<float>& values, const data::Batch& batch,
                    int64_t b, const AttentionSelection& selection) {
  const int64_t heads = map.weights.dim(1), padded_queries = map.weights.dim(2), padded_keys = map.weights.dim(3);
  SentenceMap cut;
  cut.kind = map.kind;
  cut.layer = map.layer;
  std::tie(cut.queries, cut.keys) = real_extent(map.kind, batch, b);
  ATTN_CHECK(cut.queries <= padded_queries && cut.keys <= padded_keys, "attention map ",
             layers::attention_kind_name(map.kind), " ", map.layer, " is ", padded_queries, " x ", padded_keys,
             " but sentence ", b, " needs ", cut.queries, " x ", cut.keys);
  std::vector<int> kept;
  for (int h = 0; h < heads; ++h)
    if (!selection.head || h == *selection.head) kept.push_back(h);
  cut.heads = selection.average_heads ? std::vector<int>{kMeanHead} : kept;
  cut.weights.assign(cut.heads.size() * cut.queries * cut.keys, 0.f);
  const float share = selection.average_heads ? 1.f / float(kept.size()) : 1.f;
  for (size_t k = 0; k < kept.size(); ++k) {
    float* out = cut.weights.data() + (selection.average_heads ? 0 : k * cut.queries * cut.keys);
    const float* in = values.data() + (b * heads + kept[k]) * padded_queries * padded_keys;
    for (int64_t q = 0; q < cut.queries; ++q)
      for (int64_t key = 0; key < cut.keys; ++key) out[q * cut.keys + key] += share * in[q * padded_keys + key];
  }
  return cut;
}

// Row b's ids: source, output tokens and decoder inputs at their real lengths.
SentenceAttention sentence_of(const data::Batch& batch, int64_t b) {
  SentenceAttention sentence;
  sentence.index = batch.indices[b];
  auto row = [&](const std::vector<int32_t>& block, int64_t width, int64_t length) {
    return std::vector<int32_t>(block.begin() + b * width, block.begin() + b * width + length);
  };
  sentence.source = row(batch.src, batch.src_len, batch.src_lengths[b]);
  sentence.target = row(batch.tgt_out, batch.tgt_len, batch.tgt_lengths[b]);
  sentence.decoder_input = row(batch.tgt_in, batch.tgt_len, batch.tgt_lengths[b]);
  return sentence;
}

}  // namespace

layers::AttentionMaps teacher_forced_attention(const models::Seq2SeqModel& model, const data::Batch& batch) {
  Tape tape;
  NoGradScope no_grad(tape);
  layers::AttentionMaps maps;
  layers::RunContext ctx{tape};
  ctx.attention_maps = &maps;
  model.forward(ctx, batch);
  return maps;
}

void check_selection(const layers::AttentionMaps& maps, const AttentionSelection& selection) {
  ATTN_CHECK(!(selection.head && selection.average_heads), "choose one head or the mean over heads, not both");
  std::map<AttentionKind, int> layer_counts;  // kind -> number of layers
  int64_t heads = 0;
  for (const auto& map : maps.maps) {
    layer_counts[map.kind] = std::max(layer_counts[map.kind], map.layer + 1);
    heads = std::max(heads, map.weights.dim(1));
  }
  if (selection.kind && !layer_counts.count(*selection.kind)) {
    std::string present;
    for (const auto& [kind, count] : layer_counts) present += (present.empty() ? "" : ", ") + attention_kind_name(kind);
    ATTN_CHECK(false, "this model has no ", attention_kind_name(*selection.kind), " attention (it has ", present, ")");
  }
  if (selection.layer) {
    int count = 0;
    for (const auto& [kind, layers] : layer_counts)
      if (!selection.kind || kind == *selection.kind) count = std::max(count, layers);
    std::string of = selection.kind ? " of " + attention_kind_name(*selection.kind) + " attention" : " of attention";
    ATTN_CHECK(*selection.layer >= 0 && *selection.layer < count, "layer ", *selection.layer,
               " is out of range: the model has ", count, count == 1 ? " layer" : " layers", of, " (0-", count - 1,
               ")");
  }
  if (selection.head)
    ATTN_CHECK(*selection.head >= 0 && *selection.head < heads, "head ", *selection.head,
               " is out of range: the model has ", heads, heads == 1 ? " head" : " heads", " (0-", heads - 1, ")");
}

void collect_attention(const models::Seq2SeqModel& model, const std::vector<data::Example>& examples,
                       const AttentionSelection& selection, int batch_size, const AttentionSink& sink) {
  ATTN_CHECK(batch_size >= 1, "attention dump: batch size ", batch_size, " must be at least 1");
  for (size_t first = 0; first < examples.size(); first += size_t(batch_size)) {
    size_t last = std::min(examples.size(), first + size_t(batch_size));
    std::vector<const data::Example*> rows;
    for (size_t i = first; i < last; ++i) rows.push_back(&examples[i]);
    data::Batch batch = data::make_batch(rows, kInferencePadMultiple);
    layers::AttentionMaps maps = teacher_forced_attention(model, batch);
    if (first == 0) check_selection(maps, selection);
    std::vector<SentenceAttention> sentences;
    for (int64_t b = 0; b < batch.size; ++b) sentences.push_back(sentence_of(batch, b));
    for (const auto& map : maps.maps) {
      if (!selected(map, selection)) continue;
      std::vector<float> values = map.weights.to_vector();  // (B, H, Tq, Tk)
      for (int64_t b = 0; b < batch.size; ++b) sentences[b].maps.push_back(cut_map(map, values, batch, b, selection));
    }
    for (const auto& sentence : sentences) sink(sentence);
  }
}

AttentionDumper::AttentionDumper(const models::Seq2SeqModel& model, const data::Vocab& source_vocab,
                                 const data::Vocab& target_vocab, AttentionDumpOptions options)
    : model_(model), source_vocab_(source_vocab), target_vocab_(target_vocab), options_(options) {}

void AttentionDumper::forced(const std::vector<std::string>& sources, const std::vector<std::string>& targets,
                             const AttentionSink& sink) const {
  ATTN_CHECK(sources.size() == targets.size(), "attention dump: ", sources.size(), " source lines but ", targets.size(),
             " target lines");
  const int64_t max_tokens = options_.translate.max_source_tokens;
  dump(encode_lines(sources, source_vocab_, max_tokens, "source"),
       encode_lines(targets, target_vocab_, max_tokens, "target"), sink);
}

// Free mode is teacher forcing on the model's own output: decode, then run forward() on the best
// hypothesis. The model is deterministic at inference (no dropout), so these are the weights it
// gave while decoding, up to float rounding (tests/models/test_rnn_attention.cpp checks step()
// against forward()), and both modes share one code path.
void AttentionDumper::translated(const std::vector<std::string>& sources, const AttentionSink& sink) const {
  TranslateOptions translate = options_.translate;
  translate.search.nbest = 1;
  std::vector<std::vector<int32_t>> encoded =
      encode_lines(sources, source_vocab_, translate.max_source_tokens, "source");
  Translator translator(model_, source_vocab_, target_vocab_, translate);
  std::vector<Translation> translations = translator.translate_ids(encoded);
  std::vector<std::vector<int32_t>> targets(sources.size());
  for (size_t i = 0; i < sources.size(); ++i)
    if (!translations[i].nbest.empty()) targets[i] = translations[i].nbest.front().tokens;
  dump(encoded, targets, sink);
}

void AttentionDumper::dump(const std::vector<std::vector<int32_t>>& sources,
                           const std::vector<std::vector<int32_t>>& targets, const AttentionSink& sink) const {
  std::vector<data::Example> examples;
  for (size_t i = 0; i < sources.size(); ++i)
    if (!sources[i].empty() && !targets[i].empty()) examples.push_back({sources[i], targets[i], int64_t(i)});
  // Lines without maps go to the sink too, in their place: the sink sees every line in order.
  int64_t next = 0;
  auto empty_lines_until = [&](int64_t line) {
    for (; next < line; ++next) {
      SentenceAttention empty;
      empty.index = next;
      sink(empty);
    }
  };
  collect_attention(model_, examples, options_.selection, options_.translate.batch_size,
                    [&](const SentenceAttention& sentence) {
                      empty_lines_until(sentence.index);
                      sink(sentence);
                      next = sentence.index + 1;
                    });
  empty_lines_until(int64_t(sources.size()));
}

}  // namespace attn::decode
