#pragma once
// Word alignment links, and the soft alignments (attention or posteriors) they are read from.
//
// A link (i, j) joins source position i and target position j, both from 0; Pharaoh writes it
// "i-j". Positions are words or SentencePiece pieces, whichever the caller counts. Link lists
// are kept in one order everywhere: by target position, then source position, so a line reads
// along the output.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attn::align {

using Link = std::pair<int64_t, int64_t>;  // (source position, target position)
using Links = std::vector<Link>;

// Sorted by (target, source), duplicates removed.
Links ordered(Links links);

// "i-j i-j ..." (no line break); empty for no links.
std::string pharaoh_line(const Links& links);

// Target rows over source columns plus one last column, the null: the weight a row gives to
// nothing in the source (a model's attention to the source's eos, fast_align's null word).
struct SoftAlignment {
  int64_t rows = 0;            // target positions
  int64_t columns = 0;         // source positions, the null column not counted
  std::vector<float> weights;  // (rows, columns + 1), row-major; column `columns` is the null

  SoftAlignment() = default;
  SoftAlignment(int64_t rows, int64_t columns) : rows(rows), columns(columns), weights(rows * (columns + 1), 0.f) {}
  float& at(int64_t row, int64_t column) { return weights[row * (columns + 1) + column]; }
  float at(int64_t row, int64_t column) const { return weights[row * (columns + 1) + column]; }
  int64_t null_column() const { return columns; }
};

// Hard links of a soft alignment. threshold 0: each row links to its largest column, or to
// nothing when that is the null (the first largest wins a tie). threshold > 0: each row links
// to every source column whose weight is at least `threshold` (Marian's --alignment T).
Links hard_links(const SoftAlignment& soft, float threshold = 0.f);

// Positions grouped into words: word[p] is the word of position p, or -1 when p belongs to no
// word (a special token such as eos). Words are numbered from 0 in order.
using WordOf = std::vector<int64_t>;
int64_t word_count(const WordOf& word_of);

// Piece links -> word links: words i and j link when any piece of i links to any piece of j.
// A link from or to a position of no word is dropped.
Links word_links(const Links& piece_links, const WordOf& source_word, const WordOf& target_word);

// A piece-level soft alignment -> the word level: a source word's column is the sum of its
// pieces' columns (attention to a word is attention to any of its pieces), a target word's row
// the mean of its pieces' rows; columns of no word go to the null, rows of no word are dropped.
SoftAlignment word_level(const SoftAlignment& pieces, const WordOf& source_word, const WordOf& target_word);

}  // namespace attn::align
