#pragma once
// Reference alignments of training pairs (data.train_alignments, guided alignment training):
// Pharaoh lines read into links between the pieces of an encoded pair.
//
// A line holds "i-j" links separated by spaces, i a source and j a target position from 0
// (attn-align's output, fast_align's format); an empty line links nothing. Positions count the
// whitespace-separated words of the raw lines (AlignmentLevel::words) or the SentencePiece
// pieces of the encoded sides, eos excluded (AlignmentLevel::pieces). Word links become piece
// links at encoding: a piece starting with U+2581 starts a new word (piece_words), and pieces a
// and b link when their words do.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/choice.h"
#include "data/vocab.h"

namespace attn::data {

// (source piece, target piece), positions from 0 within the text (eos excluded); ordered by
// target, then source, without duplicates.
using PieceLink = std::pair<int32_t, int32_t>;
using PieceLinks = std::vector<PieceLink>;

// The word of each id: words numbered from 0 in order, -1 for eos, bos and pad. A word starts at
// the first character after a space: a piece "▁x" starts one, and so does "x" after a lone "▁"
// piece, which belongs to the word it precedes (none when none follows), as the decoded text's
// whitespace split sees it.
std::vector<int64_t> piece_words(const std::vector<int32_t>& ids, const Vocab& vocab);

// The words of a raw line as whitespace splits it (spaces and tabs).
int64_t whitespace_word_count(std::string_view line);

// The (source, target) links of one Pharaoh line. A token other than "i-j" with i, j >= 0 is an
// attn::Error quoting it.
std::vector<std::pair<int64_t, int64_t>> parse_training_links(std::string_view line);

// The links of one pair, encoded as `src_ids` and `tgt_ids` (eos at the end of each), read from
// its Pharaoh line at `level`. A link beyond the sentence (its words of the raw lines, or its
// pieces) is an attn::Error naming it and the sentence's length. Words that SentencePiece's
// normalisation merged away keep no link.
PieceLinks pair_links(std::string_view line, AlignmentLevel level, const std::string& src_text,
                      const std::string& tgt_text, const std::vector<int32_t>& src_ids,
                      const std::vector<int32_t>& tgt_ids, const Vocab& src_vocab, const Vocab& tgt_vocab);

}  // namespace attn::data
