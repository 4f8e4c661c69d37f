#include "layers/attention_maps.h"

#include "core/check.h"

namespace attn::layers {

namespace {

// The one list of kinds and their names (the CSV's kind column, attn-dump-attention --kind).
struct KindName {
  AttentionKind kind;
  const char* name;
};
constexpr KindName kKindNames[] = {{AttentionKind::encoder_self, "enc_self"},
                                   {AttentionKind::decoder_self, "dec_self"},
                                   {AttentionKind::cross, "cross"}};

}  // namespace

std::string attention_kind_name(AttentionKind kind) {
  for (const KindName& entry : kKindNames)
    if (entry.kind == kind) return entry.name;
  return "unknown";
}

AttentionKind attention_kind_from_name(const std::string& name) {
  std::string known;
  for (const KindName& entry : kKindNames) {
    if (entry.name == name) return entry.kind;
    known += std::string(known.empty() ? "" : ", ") + entry.name;
  }
  throw Error("unknown attention kind '" + name + "'; expected one of " + known);
}

}  // namespace attn::layers
