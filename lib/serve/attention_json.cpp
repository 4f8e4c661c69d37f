#include "serve/attention_json.h"

#include <map>

#include "decode/alignment.h"
#include "decode/alignment_choice.h"
#include "decode/attention_csv.h"
#include "serve/translate_request.h"

namespace attn::serve {

using nlohmann::json;

namespace {

json pieces(const std::vector<int32_t>& ids, const data::Vocab& vocab) {
  json tokens = json::array();
  for (int32_t id : ids) tokens.push_back(vocab.piece(id));
  return tokens;
}

std::string listed(const std::set<int>& values) {
  std::string text;
  for (int v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
  return text;
}

}  // namespace

bool AttentionFilter::keeps(const decode::SentenceMap& map) const {
  return (kinds.empty() || kinds.count(map.kind)) && (layers.empty() || layers.count(map.layer));
}

void check_filter(const std::vector<decode::SentenceMap>& maps, const AttentionFilter& filter) {
  std::map<layers::AttentionKind, int> layer_counts;
  std::set<int> heads;
  for (const decode::SentenceMap& map : maps) {
    layer_counts[map.kind] = std::max(layer_counts[map.kind], map.layer + 1);
    heads.insert(map.heads.begin(), map.heads.end());
  }
  std::string kinds;
  for (const auto& [kind, count] : layer_counts)
    kinds += (kinds.empty() ? "" : ", ") + layers::attention_kind_name(kind) + " (" + std::to_string(count) +
             (count == 1 ? " layer)" : " layers)");
  for (layers::AttentionKind kind : filter.kinds)
    if (!layer_counts.count(kind))
      throw HttpError(400, "Invalid request: kinds: this model has no " + layers::attention_kind_name(kind) +
                               " attention; it has " + kinds);
  for (int layer : filter.layers) {
    bool found = false;
    for (const auto& [kind, count] : layer_counts)
      if ((filter.kinds.empty() || filter.kinds.count(kind)) && layer < count) found = true;
    if (!found)
      throw HttpError(
          400, "Invalid request: layers: layer " + std::to_string(layer) + " is out of range; the model has " + kinds);
  }
  for (int head : filter.heads)
    if (!heads.count(head))
      throw HttpError(400, "Invalid request: heads: head " + std::to_string(head) +
                               " is out of range; the model's heads are " + listed(heads));
}

AttentionJson::AttentionJson(const data::Vocab& source, const data::Vocab& target, AttentionFilter filter,
                             int64_t max_bytes, std::string bound_name)
    : source_(source),
      target_(target),
      filter_(std::move(filter)),
      max_bytes_(max_bytes),
      bound_name_(std::move(bound_name)) {}

json AttentionJson::map_json(const decode::SentenceMap& map, size_t head) {
  std::string weights;
  weights.reserve(size_t(map.queries * map.keys) * 11);
  for (int64_t q = 0; q < map.queries; ++q) {
    const float* row = map.row(head, q);
    for (int64_t k = 0; k < map.keys; ++k) {
      if (!weights.empty()) weights += ' ';
      decode::append_weight(weights, row[k]);
    }
  }
  bytes_ += int64_t(weights.size());
  if (max_bytes_ > 0 && bytes_ > max_bytes_)
    throw HttpError(413, "Payload too large: the attention maps asked for come to over " + std::to_string(max_bytes_) +
                             " bytes (" + bound_name_ +
                             "); ask for fewer kinds, layers or heads, or for shorter sentences");
  return {{"kind", layers::attention_kind_name(map.kind)},
          {"layer", map.layer},
          {"head", map.heads[head]},
          {"queries", map.queries},
          {"keys", map.keys},
          {"weights", std::move(weights)}};
}

void AttentionJson::add(const decode::SentenceAttention& sentence, const std::string& source_text,
                        const std::optional<std::string>& target_text, const align::Links& links) {
  std::vector<int32_t> output = sentence.target;
  if (!output.empty() && output.back() == target_.eos_id()) output.pop_back();
  json maps = json::array();
  for (const decode::SentenceMap& map : sentence.maps) {
    if (!filter_.keeps(map)) continue;
    for (size_t h = 0; h < map.heads.size(); ++h)
      if (filter_.heads.empty() || filter_.heads.count(map.heads[h])) maps.push_back(map_json(map, h));
  }
  json link_pairs = json::array();
  for (const auto& [source, target] : links) link_pairs.push_back({source, target});
  sentences_.push_back({{"index", sentence.index},
                        {"source", source_text},
                        {"target", target_text ? *target_text : target_.decode(output)},
                        {"source_tokens", pieces(sentence.source, source_)},
                        {"target_tokens", pieces(sentence.target, target_)},
                        {"decoder_input_tokens", pieces(sentence.decoder_input, target_)},
                        {"source_words", decode::token_words(sentence.source, source_)},
                        {"target_words", decode::token_words(sentence.target, target_)},
                        {"decoder_input_words", decode::token_words(sentence.decoder_input, target_)},
                        {"links", link_pairs},
                        {"maps", maps}});
}

json AttentionJson::document(const std::string& model, bool forced,
                             const std::optional<decode::AlignmentExtraction>& alignment) const {
  json unit = nullptr;
  if (alignment)
    unit = {{"unit", alignment->unit == decode::AlignmentUnit::words ? "words" : "pieces"},
            {"extraction", decode::describe(*alignment)}};
  return {{"model", model}, {"mode", forced ? "forced" : "translated"}, {"alignment", unit}, {"sentences", sentences_}};
}

}  // namespace attn::serve
