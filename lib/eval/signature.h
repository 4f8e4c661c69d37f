#pragma once
// The `version:` field of our sacreBLEU-style signatures.
//
// sacreBLEU puts its own version there; we put ours, so that nobody mistakes an attn score
// for one produced by sacreBLEU itself, while saying which defaults it reproduces.
namespace attn::eval {

constexpr const char* kSignatureVersion = "attn-sacrebleu2-compat";

}  // namespace attn::eval
