#include "align/symmetrize.h"

#include <algorithm>
#include <set>

namespace attn::align {

namespace {

// Which source and target words the alignment being built covers.
class Coverage {
 public:
  Coverage(const std::set<Link>& links) {
    for (const auto& [source, target] : links) {
      source_.resize(std::max<size_t>(source_.size(), size_t(source) + 1), false);
      target_.resize(std::max<size_t>(target_.size(), size_t(target) + 1), false);
    }
  }
  bool source(int64_t i) const { return source_[i]; }
  bool target(int64_t j) const { return target_[j]; }
  void add(const Link& link) { source_[link.first] = target_[link.second] = true; }

 private:
  std::vector<bool> source_, target_;
};

// Grow-diag: every link of `taken` looks at its 8 neighbours; one in `candidates` that covers
// a word not yet covered is taken. The set is walked in (source, target) order and a link
// taken ahead of the walk is visited in the same pass, as in Koehn's loop over source and
// target words; passes repeat until one takes nothing.
void grow_diagonally(std::set<Link>& taken, const std::set<Link>& candidates, Coverage& covered) {
  static constexpr int kNeighbours[8][2] = {{-1, 0}, {0, -1}, {1, 0}, {0, 1}, {-1, -1}, {-1, 1}, {1, -1}, {1, 1}};
  for (bool grew = true; grew;) {
    grew = false;
    for (const Link& link : taken)
      for (const auto& step : kNeighbours) {
        const Link next{link.first + step[0], link.second + step[1]};
        if (!candidates.count(next) || taken.count(next)) continue;
        if (covered.source(next.first) && covered.target(next.second)) continue;
        taken.insert(next);  // std::set: the walk's iterator stays valid
        covered.add(next);
        grew = true;
      }
  }
}

// Final-and: a link of `links` whose source and target words are both uncovered is taken.
void add_final(std::set<Link>& taken, const std::set<Link>& links, Coverage& covered) {
  for (const Link& link : links)
    if (!covered.source(link.first) && !covered.target(link.second)) {
      taken.insert(link);
      covered.add(link);
    }
}

}  // namespace

Links symmetrize(const Links& forward, const Links& reverse, Symmetrization how) {
  const std::set<Link> a(forward.begin(), forward.end()), b(reverse.begin(), reverse.end());
  std::set<Link> both, either = a;
  either.insert(b.begin(), b.end());
  std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::inserter(both, both.end()));
  switch (how) {
    case Symmetrization::intersection:
      return ordered(Links(both.begin(), both.end()));
    case Symmetrization::union_links:
      return ordered(Links(either.begin(), either.end()));
    case Symmetrization::grow_diag_final_and:
      break;
  }
  Coverage covered(either);
  for (const Link& link : both) covered.add(link);
  grow_diagonally(both, either, covered);
  add_final(both, a, covered);
  add_final(both, b, covered);
  return ordered(Links(both.begin(), both.end()));
}

}  // namespace attn::align
