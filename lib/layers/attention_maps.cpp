#include "layers/attention_maps.h"

namespace attn::layers {

std::string attention_kind_name(AttentionKind kind) {
  switch (kind) {
    case AttentionKind::encoder_self:
      return "enc_self";
    case AttentionKind::decoder_self:
      return "dec_self";
    case AttentionKind::cross:
      return "cross";
  }
  return "unknown";
}

}  // namespace attn::layers
