#pragma once
// What decode/alignment.h reads from the cross attention to make word links, alone: for code
// that only carries the choices (attn-serve's request parser, attn-translate's flags).
#include <optional>
#include <vector>

#include "core/choice.h"

namespace attn::decode {

enum class AlignmentUnit { words, pieces };
enum class WordLinking { any_piece, mean_attention };

struct AlignmentExtraction {
  int layer = -1;           // cross-attention layer from 0; negative counts from the last (-1 = last)
  std::optional<int> head;  // one head; unset: the mean over the heads
  bool shifted = false;
  float threshold = 0.f;  // 0: argmax
  AlignmentUnit unit = AlignmentUnit::words;
  WordLinking word_linking = WordLinking::mean_attention;  // measured: docs/experiments.md
};

// The cross attention a model offers to align with: its layers and each layer's heads (no
// layer for a model without cross attention). decode::cross_attention_shape reads it.
struct CrossAttentionShape {
  int layers = 0;
  std::vector<int> heads;  // per layer
};

}  // namespace attn::decode

namespace attn {
template <>
struct ChoiceNames<decode::AlignmentUnit> {
  static constexpr std::array<std::pair<decode::AlignmentUnit, const char*>, 2> table{
      {{decode::AlignmentUnit::words, "words"}, {decode::AlignmentUnit::pieces, "pieces"}}};
};
template <>
struct ChoiceNames<decode::WordLinking> {
  static constexpr std::array<std::pair<decode::WordLinking, const char*>, 2> table{
      {{decode::WordLinking::any_piece, "any"}, {decode::WordLinking::mean_attention, "mean"}}};
};
}  // namespace attn
