#include "serve/model_attention.h"

#include "decode/alignment.h"

namespace attn::serve {

ModelAttention::ModelAttention(const models::Seq2SeqModel& model, const data::Vocab& source_vocab,
                               const data::Vocab& target_vocab, decode::TranslateOptions options,
                               std::optional<decode::AlignmentExtraction> alignment, std::string name)
    : model_(model),
      source_vocab_(source_vocab),
      target_vocab_(target_vocab),
      options_(options),
      alignment_(alignment),
      name_(std::move(name)) {}

// Every map is collected (the links read every cross head); the filter applies to the answer.
nlohmann::json ModelAttention::attention(const AttentionQuery& query) {
  decode::AttentionDumpOptions options;
  options.translate = options_;
  options.translate.search.beam = query.beam;
  const decode::AttentionDumper dumper(model_, source_vocab_, target_vocab_, options);
  AttentionJson json(source_vocab_, target_vocab_, query.filter, query.max_bytes, "--max-attention-bytes");
  bool checked = false;
  const bool forced = !query.targets.empty();
  auto sink = [&](const decode::SentenceAttention& sentence) {
    if (!checked && !sentence.maps.empty()) {
      check_filter(sentence.maps, query.filter);
      checked = true;
    }
    const align::Links links = alignment_ && !sentence.maps.empty()
                                   ? decode::alignment_links(sentence, *alignment_, source_vocab_, target_vocab_)
                                   : align::Links{};
    const size_t line = size_t(sentence.index);
    json.add(sentence, query.sources[line], forced ? std::optional<std::string>(query.targets[line]) : std::nullopt,
             links);
  };
  if (forced)
    dumper.forced(query.sources, query.targets, sink);
  else
    dumper.translated(query.sources, sink);
  return json.document(name_, forced, alignment_);
}

}  // namespace attn::serve
