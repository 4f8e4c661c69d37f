#include "decode/alignment.h"

#include "core/check.h"
#include "data/training_links.h"

namespace attn::decode {

namespace {

// The cross map of the extraction's layer.
const SentenceMap& chosen_layer(const SentenceAttention& sentence, int requested) {
  int layers = 0;
  for (const SentenceMap& map : sentence.maps)
    if (map.kind == layers::AttentionKind::cross) layers = std::max(layers, map.layer + 1);
  const int layer = requested < 0 ? layers + requested : requested;
  ATTN_CHECK(layers > 0, "sentence ", sentence.index, " has no cross attention to align with");
  ATTN_CHECK(layer >= 0 && layer < layers, "alignment layer ", requested, " is out of range: the model has ", layers,
             layers == 1 ? " layer" : " layers", " of cross attention (0-", layers - 1, ", or -1 to -", layers,
             " from the last)");
  for (const SentenceMap& map : sentence.maps)
    if (map.kind == layers::AttentionKind::cross && map.layer == layer) return map;
  ATTN_CHECK(false, "sentence ", sentence.index, " lacks cross attention layer ", layer);
  return sentence.maps.front();  // unreachable
}

// The stored heads the extraction averages: all of them, or the one asked for.
std::vector<size_t> chosen_heads(const SentenceMap& map, const std::optional<int>& head) {
  std::vector<size_t> kept;
  for (size_t h = 0; h < map.heads.size(); ++h)
    if (!head || map.heads[h] == *head) kept.push_back(h);
  ATTN_CHECK(!kept.empty(), "alignment head ", head.value_or(0), " is out of range: the model has ", map.heads.size(),
             map.heads.size() == 1 ? " head" : " heads", " (0-", map.heads.size() - 1, ")");
  return kept;
}

// Positions of `ids` but eos, as (position) list; eos positions are returned in `eos`.
std::vector<int64_t> non_eos(const std::vector<int32_t>& ids, int64_t count) {
  std::vector<int64_t> positions;
  for (int64_t p = 0; p < count; ++p)
    if (ids[p] != data::kEosId) positions.push_back(p);
  return positions;
}

align::WordOf without_eos(const align::WordOf& words, const std::vector<int64_t>& positions) {
  align::WordOf kept;
  for (int64_t p : positions) kept.push_back(words[p]);
  return kept;
}

}  // namespace

AttentionSelection alignment_selection() {
  AttentionSelection selection;
  selection.kind = layers::AttentionKind::cross;
  return selection;
}

align::WordOf token_words(const std::vector<int32_t>& ids, const data::Vocab& vocab) {
  return data::piece_words(ids, vocab);
}

align::SoftAlignment cross_alignment(const SentenceAttention& sentence, const AlignmentExtraction& extraction) {
  const SentenceMap& map = chosen_layer(sentence, extraction.layer);
  const std::vector<size_t> heads = chosen_heads(map, extraction.head);
  const std::vector<int64_t> rows = non_eos(sentence.target, map.queries);
  const std::vector<int64_t> columns = non_eos(sentence.source, map.keys);
  align::SoftAlignment soft(int64_t(rows.size()), int64_t(columns.size()));
  for (int64_t r = 0; r < soft.rows; ++r) {
    const int64_t query = extraction.shifted && rows[r] + 1 < map.queries ? rows[r] + 1 : rows[r];
    for (size_t h : heads) {
      const float* weights = map.row(h, query);
      const float share = 1.f / float(heads.size());
      int64_t c = 0;
      for (int64_t key = 0; key < map.keys; ++key) {
        const bool eos = sentence.source[key] == data::kEosId;
        soft.at(r, eos ? soft.null_column() : c) += share * weights[key];
        if (!eos) ++c;
      }
    }
  }
  return soft;
}

align::Links alignment_links(const SentenceAttention& sentence, const AlignmentExtraction& extraction,
                             const data::Vocab& source_vocab, const data::Vocab& target_vocab) {
  if (sentence.maps.empty()) return {};
  const align::SoftAlignment pieces = cross_alignment(sentence, extraction);
  if (extraction.unit == AlignmentUnit::pieces) return align::ordered(align::hard_links(pieces, extraction.threshold));
  const int64_t keys = int64_t(sentence.source.size()), queries = int64_t(sentence.target.size());
  const align::WordOf source = without_eos(token_words(sentence.source, source_vocab), non_eos(sentence.source, keys));
  const align::WordOf target =
      without_eos(token_words(sentence.target, target_vocab), non_eos(sentence.target, queries));
  switch (extraction.word_linking) {
    case WordLinking::any_piece:
      break;
    case WordLinking::mean_attention:
      return align::ordered(align::hard_links(align::word_level(pieces, source, target), extraction.threshold));
  }
  return align::word_links(align::hard_links(pieces, extraction.threshold), source, target);
}

std::vector<std::vector<align::Links>> nbest_alignments(
    const models::Seq2SeqModel& model, const std::vector<Translation>& translations,
    const std::vector<std::optional<AlignmentExtraction>>& extractions, const data::Vocab& source_vocab,
    const data::Vocab& target_vocab, int batch_size) {
  ATTN_CHECK(extractions.size() == translations.size(), "nbest_alignments: ", extractions.size(), " extractions for ",
             translations.size(), " translations");
  std::vector<std::vector<align::Links>> links(translations.size());
  std::vector<std::pair<size_t, size_t>> owner;  // example -> (translation, hypothesis)
  std::vector<data::Example> examples;
  for (size_t i = 0; i < translations.size(); ++i) {
    if (!extractions[i] || translations[i].source.empty()) continue;
    links[i].resize(translations[i].nbest.size());
    for (size_t k = 0; k < translations[i].nbest.size(); ++k) {
      examples.push_back({translations[i].source, translations[i].nbest[k].tokens, int64_t(examples.size())});
      owner.emplace_back(i, k);
    }
  }
  collect_attention(model, examples, alignment_selection(), batch_size, [&](const SentenceAttention& sentence) {
    const auto [i, k] = owner[size_t(sentence.index)];
    links[i][k] = alignment_links(sentence, *extractions[i], source_vocab, target_vocab);
  });
  return links;
}

std::vector<align::Links> translation_alignments(const models::Seq2SeqModel& model,
                                                 const std::vector<Translation>& translations,
                                                 const AlignmentExtraction& extraction, const data::Vocab& source_vocab,
                                                 const data::Vocab& target_vocab, int batch_size) {
  std::vector<Translation> best = translations;
  for (Translation& translation : best)
    if (translation.nbest.size() > 1) translation.nbest.resize(1);
  const std::vector<std::vector<align::Links>> links =
      nbest_alignments(model, best, std::vector<std::optional<AlignmentExtraction>>(best.size(), extraction),
                       source_vocab, target_vocab, batch_size);
  std::vector<align::Links> first(links.size());
  for (size_t i = 0; i < links.size(); ++i)
    if (!links[i].empty()) first[i] = links[i].front();
  return first;
}

std::vector<align::Links> reverse_word_links(const models::Seq2SeqModel& reverse_model,
                                             const data::Vocab& reverse_source_vocab,
                                             const data::Vocab& reverse_target_vocab,
                                             const std::vector<std::string>& sources,
                                             const std::vector<std::string>& targets, AlignmentExtraction extraction,
                                             const TranslateOptions& options) {
  extraction.unit = AlignmentUnit::words;  // the two models' pieces differ; their words do not
  AttentionDumpOptions dump_options;
  dump_options.selection = alignment_selection();
  dump_options.translate = options;
  const AttentionDumper dumper(reverse_model, reverse_source_vocab, reverse_target_vocab, dump_options);
  std::vector<align::Links> links(sources.size());
  dumper.forced(targets, sources, [&](const SentenceAttention& sentence) {
    align::Links transposed;
    for (const auto& [target_word, source_word] :
         alignment_links(sentence, extraction, reverse_source_vocab, reverse_target_vocab))
      transposed.emplace_back(source_word, target_word);
    links[size_t(sentence.index)] = align::ordered(std::move(transposed));
  });
  return links;
}

CrossAttentionShape cross_attention_shape(const models::Seq2SeqModel& model) {
  const int32_t eos = data::kEosId;
  CrossAttentionShape shape;
  collect_attention(model, {data::Example{{eos}, {eos}, 0}}, alignment_selection(), 1,
                    [&](const SentenceAttention& sentence) {
                      for (const SentenceMap& map : sentence.maps) {
                        if (map.kind != layers::AttentionKind::cross) continue;
                        shape.layers = std::max(shape.layers, map.layer + 1);
                        shape.heads.resize(size_t(shape.layers), 0);
                        shape.heads[size_t(map.layer)] = int(map.heads.size());
                      }
                    });
  return shape;
}

}  // namespace attn::decode
