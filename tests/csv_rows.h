#pragma once
// Reading attn-dump-attention's tidy CSV back in tests: an RFC 4180 record splitter and the
// checks every dump must pass.
#include <cstdint>
#include <string>
#include <vector>

namespace attn::testing {

// The fields of one CSV record: quoted fields may hold commas and doubled quotes ("" -> ").
std::vector<std::string> csv_fields(const std::string& line);

struct AttentionRow {
  int64_t sentence = 0;
  std::string kind;
  int layer = 0;
  std::string head;
  int64_t query_pos = 0;
  std::string query_token;
  int64_t key_pos = 0;
  std::string key_token;
  double weight = 0.0;
};

// Every row of a dump; throws when the header is not the documented one or a row has a field
// count other than 9.
std::vector<AttentionRow> parse_attention_csv(const std::string& text);

// Largest |sum of weights - 1| over the attention rows (sentence, kind, layer, head, query_pos).
double worst_row_sum_error(const std::vector<AttentionRow>& rows);

}  // namespace attn::testing
