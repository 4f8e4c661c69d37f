#pragma once
// Symmetrisation of two directional word alignments of one sentence pair: the forward one
// (each target word aligned from the source) and the reverse one (each source word aligned
// from the target), both given in (source, target) coordinates.
//
//   intersection          links in both: high precision
//   union                 links in either: high recall
//   grow_diag_final_and   (Koehn et al. 2003; the Moses default) start from the intersection;
//                         grow: repeatedly add a link of the union that neighbours a link
//                         already taken (the 8 neighbours: sideways, up, down and diagonal)
//                         when its source or its target word is still unaligned; final-and:
//                         add each link of the forward, then of the reverse alignment whose
//                         source and target words are both still unaligned.
#include "align/links.h"
#include "core/choice.h"

namespace attn::align {

enum class Symmetrization { intersection, union_links, grow_diag_final_and };

// The symmetrised links, ordered (links.h).
Links symmetrize(const Links& forward, const Links& reverse, Symmetrization how);

}  // namespace attn::align

namespace attn {
template <>
struct ChoiceNames<align::Symmetrization> {
  static constexpr std::array<std::pair<align::Symmetrization, const char*>, 3> table{
      {{align::Symmetrization::intersection, "intersection"},
       {align::Symmetrization::union_links, "union"},
       {align::Symmetrization::grow_diag_final_and, "grow-diag-final-and"}}};
};
}  // namespace attn
