#include "csv_rows.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace attn::testing {

std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::vector<AttentionRow> parse_attention_csv(const std::string& text) {
  std::istringstream stream(text);
  std::string line;
  if (!std::getline(stream, line) || line != "sentence,kind,layer,head,query_pos,query_token,key_pos,key_token,weight")
    throw std::runtime_error("unexpected header: " + line);
  std::vector<AttentionRow> rows;
  while (std::getline(stream, line)) {
    std::vector<std::string> f = csv_fields(line);
    if (f.size() != 9) throw std::runtime_error("not 9 fields: " + line);
    rows.push_back({std::stoll(f[0]), f[1], std::stoi(f[2]), f[3], std::stoll(f[4]), f[5], std::stoll(f[6]), f[7],
                    std::stod(f[8])});
  }
  return rows;
}

double worst_row_sum_error(const std::vector<AttentionRow>& rows) {
  std::map<std::tuple<int64_t, std::string, int, std::string, int64_t>, double> sums;
  for (const auto& row : rows) sums[{row.sentence, row.kind, row.layer, row.head, row.query_pos}] += row.weight;
  double worst = 0.0;
  for (const auto& [key, sum] : sums) worst = std::max(worst, std::fabs(sum - 1.0));
  return worst;
}

}  // namespace attn::testing
