#include "decode/attention_csv.h"

#include <cstdio>

#include "core/check.h"

namespace attn::decode {

namespace {

// The quoted pieces of `ids`, computed once per sentence rather than once per row.
std::vector<std::string> fields_of(const std::vector<int32_t>& ids, const PieceName& piece) {
  std::vector<std::string> fields;
  fields.reserve(ids.size());
  for (int32_t id : ids) fields.push_back(csv_field(piece(id)));
  return fields;
}

std::string head_field(int head) { return head == decode::kMeanHead ? "mean" : std::to_string(head); }

}  // namespace

void append_weight(std::string& out, float weight) {
  char text[32];
  const int length = std::snprintf(text, sizeof text, "%.9g", double(weight));
  out.append(text, size_t(length));
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\" \t\r\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

AttentionCsvWriter::AttentionCsvWriter(std::ostream& out, PieceName source_piece, PieceName target_piece)
    : out_(out), source_piece_(std::move(source_piece)), target_piece_(std::move(target_piece)) {
  out_ << kAttentionCsvHeader << '\n';
}

void AttentionCsvWriter::write(const SentenceAttention& sentence) {
  if (sentence.maps.empty()) return;
  const std::vector<std::string> source = fields_of(sentence.source, source_piece_);
  const std::vector<std::string> output = fields_of(sentence.target, target_piece_);
  const std::vector<std::string> input = fields_of(sentence.decoder_input, target_piece_);
  std::string line;
  for (const auto& map : sentence.maps) {
    const bool encoder = map.kind == layers::AttentionKind::encoder_self;
    const std::vector<std::string>& queries = encoder ? source : output;
    const std::vector<std::string>& keys = map.kind == layers::AttentionKind::decoder_self ? input : source;
    ATTN_CHECK(map.queries <= int64_t(queries.size()) && map.keys <= int64_t(keys.size()), "sentence ", sentence.index,
               ": a ", map.queries, " x ", map.keys, " map for ", queries.size(), " query and ", keys.size(),
               " key tokens");
    const std::string prefix = std::to_string(sentence.index) + "," + layers::attention_kind_name(map.kind) + "," +
                               std::to_string(map.layer) + ",";
    for (size_t h = 0; h < map.heads.size(); ++h) {
      const std::string head = prefix + head_field(map.heads[h]) + ",";
      for (int64_t q = 0; q < map.queries; ++q) {
        const float* row = map.row(h, q);
        for (int64_t k = 0; k < map.keys; ++k) {
          line.assign(head);
          line.append(std::to_string(q)).append(",").append(queries[q]).append(",");
          line.append(std::to_string(k)).append(",").append(keys[k]).append(",");
          append_weight(line, row[k]);
          line.append("\n");
          out_ << line;
        }
      }
    }
  }
}

void AttentionCsvWriter::finish() { out_.flush(); }

}  // namespace attn::decode
