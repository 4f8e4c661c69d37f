#pragma once
// The attention dump's file formats.
//
// Tidy CSV (RFC 4180), one row per attention weight:
//   sentence,kind,layer,head,query_pos,query_token,key_pos,key_token,weight
// sentence is the 0-based input line; kind is enc_self, dec_self or cross; head is the model's
// head index, or "mean" for a map averaged over heads; positions start at 0; tokens are
// SentencePiece pieces ("</s>" included), quoted when they hold a comma, a quote, a space or
// a line break; weights have 9 significant digits (a float's exact value). Which token labels a query or key of each
// kind: decode/attention_dump.h. (Pharaoh alignments: align/links.h.)
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "decode/attention_dump.h"
#include "decode/attention_writer.h"

namespace attn::decode {

inline constexpr const char* kAttentionCsvHeader =
    "sentence,kind,layer,head,query_pos,query_token,key_pos,key_token,weight";

// A CSV field: `text` as is, or in double quotes (inner quotes doubled) when it holds a comma, a
// double quote, a space, a tab, CR or LF. "▁" (U+2581) is not a space: "▁word" stays unquoted.
std::string csv_field(const std::string& text);

// Appends a weight as the CSV writes it: printf's %.9g, enough digits for the float to read back
// exactly (attn-serve's attention explorer shows the same text).
void append_weight(std::string& out, float weight);

// id -> SentencePiece piece.
using PieceName = std::function<std::string(int32_t)>;

class AttentionCsvWriter final : public AttentionWriter {
 public:
  // Writes the header line.
  AttentionCsvWriter(std::ostream& out, PieceName source_piece, PieceName target_piece);
  // Every weight of every map of `sentence`: heads x queries x keys rows per map.
  void write(const SentenceAttention& sentence) override;
  // CSV has no end of its own: flushes the stream.
  void finish() override;

 private:
  std::ostream& out_;
  PieceName source_piece_, target_piece_;
};

}  // namespace attn::decode
