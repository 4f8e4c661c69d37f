#pragma once
// Where an attention dump goes: one implementation per file format (attention_csv.h: tidy CSV).
// The dumper's sink hands each sentence's maps to write() in input order; finish() follows the
// last sentence, so a format with an end of its own (a closing bracket, a page's footer) writes it.
//
//   std::unique_ptr<AttentionWriter> writer = std::make_unique<AttentionCsvWriter>(out, source, target);
//   dumper.forced(sources, targets, [&](const SentenceAttention& s) { writer->write(s); });
//   writer->finish();
#include "decode/attention_dump.h"

namespace attn::decode {

class AttentionWriter {
 public:
  virtual ~AttentionWriter() = default;
  // Every map of one sentence (none for an empty line).
  virtual void write(const SentenceAttention& sentence) = 0;
  // After the last sentence: the format's end, and everything handed to the stream.
  virtual void finish() = 0;
};

}  // namespace attn::decode
