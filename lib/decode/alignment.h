#pragma once
// Hard word alignments read from a model's cross attention (attn-dump-attention --alignments,
// attn-translate --alignments).
//
// A sentence's cross maps (decode/attention_dump.h) give, per output token y_{q+1} (query q),
// weights over the source tokens. What is read from them (AlignmentExtraction) are the
// choices the literature measured:
//   layer     which decoder layer's cross attention (negative counts from the last)
//   head      one head, or the mean of the heads
//   shifted   target token j reads row j + 1: the step whose decoder input is y_j attends to
//             what y_j translates (Garg et al. 2019; Chen et al. 2020), where row j is the step
//             that is about to predict y_j. A last token cut at the length limit, with no row
//             after it, keeps its own row.
//   threshold argmax per target token (0), or every source token at least this weight
// The source eos is the null: a token whose argmax is the eos links to nothing, and neither
// side's eos is ever linked. Words are the whitespace-separated words of the text: a piece
// beginning with SentencePiece's "▁" starts a word, the others continue it. A word link is
// made from pieces (`any_piece`: words link when any of their pieces link) or from the
// attention summed over each source word's pieces and averaged over each target word's pieces
// (`mean_attention`), then the same argmax or threshold.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "align/links.h"
#include "data/vocab.h"
#include "decode/alignment_extraction.h"
#include "decode/attention_dump.h"
#include "decode/translator.h"
#include "models/seq2seq_model.h"

namespace attn::decode {

// The maps collect_attention must keep for any extraction: every cross layer and head.
AttentionSelection alignment_selection();

// The word of each token of `ids` (align::WordOf): -1 for eos, bos and pad.
align::WordOf token_words(const std::vector<int32_t>& ids, const data::Vocab& vocab);

// The piece-level soft alignment the extraction reads: rows the output tokens but eos,
// columns the source tokens but eos, the null column the weight of the source eos. Throws
// when the layer or head is out of range, naming how many there are.
align::SoftAlignment cross_alignment(const SentenceAttention& sentence, const AlignmentExtraction& extraction);

// The hard links of one sentence (none for a line without maps), in words or pieces.
align::Links alignment_links(const SentenceAttention& sentence, const AlignmentExtraction& extraction,
                             const data::Vocab& source_vocab, const data::Vocab& target_vocab);

// The links of every hypothesis of translation i under extractions[i] (none when unset, and
// none for an empty line), read from a teacher-forced forward() over each hypothesis, in
// batches of batch_size in the order of the translations and their hypotheses: the weights
// the model gave while decoding, up to rounding (as AttentionDumper::translated). One
// forward serves every extraction: the maps keep every layer and head.
std::vector<std::vector<align::Links>> nbest_alignments(
    const models::Seq2SeqModel& model, const std::vector<Translation>& translations,
    const std::vector<std::optional<AlignmentExtraction>>& extractions, const data::Vocab& source_vocab,
    const data::Vocab& target_vocab, int batch_size);

// The links of each translation's best hypothesis (an empty line gets none), as nbest_alignments.
std::vector<align::Links> translation_alignments(const models::Seq2SeqModel& model,
                                                 const std::vector<Translation>& translations,
                                                 const AlignmentExtraction& extraction, const data::Vocab& source_vocab,
                                                 const data::Vocab& target_vocab, int batch_size);

// The word links of a reverse model (trained on target -> source) over the same text pairs,
// in the forward direction's (source word, target word) coordinates: the reverse model reads
// targets[i] as its source and is forced on sources[i]; its links are then transposed. With the
// forward model's links, align::symmetrize makes both directions one alignment (as attn-align
// does with its two). `options` are the reverse run's (batch size, length limits); a pair with
// an empty side gets no links.
std::vector<align::Links> reverse_word_links(const models::Seq2SeqModel& reverse_model,
                                             const data::Vocab& reverse_source_vocab,
                                             const data::Vocab& reverse_target_vocab,
                                             const std::vector<std::string>& sources,
                                             const std::vector<std::string>& targets, AlignmentExtraction extraction,
                                             const TranslateOptions& options);

// The cross attention of `model`, read from one forward over a one-token sentence.
CrossAttentionShape cross_attention_shape(const models::Seq2SeqModel& model);

}  // namespace attn::decode
