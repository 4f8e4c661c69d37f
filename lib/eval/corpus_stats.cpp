#include "eval/corpus_stats.h"

#include "core/check.h"

namespace attn::eval {

void check_corpus(const std::vector<std::string>& hyps, const std::vector<std::string>& refs) {
  ATTN_CHECK(hyps.size() == refs.size(), "the hypotheses have ", hyps.size(), " lines but the references have ",
             refs.size());
  ATTN_CHECK(!hyps.empty(), "nothing to score: the hypotheses and references are empty");
  for (size_t i = 0; i < refs.size(); ++i)
    ATTN_CHECK(!refs[i].empty(), "reference line ", i + 1, " is empty; every sentence needs a reference");
}

}  // namespace attn::eval
