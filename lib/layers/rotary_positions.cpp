#include "layers/rotary_positions.h"

#include "ops/rotary.h"

namespace attn::layers {

void RotaryPositions::rotate_queries_keys(Tape& tape, Tensor& q, Tensor& k, int64_t first) const {
  q = ops::rotary(tape, q, first);
  k = ops::rotary(tape, k, first);
}

std::unique_ptr<PositionScheme> make_rotary_positions(ParameterStore&, const std::string&,
                                                      const PositionSchemeOptions& options) {
  const int64_t head_width = options.width / options.heads;
  ATTN_CHECK(head_width % 2 == 0,
             "rotary positions turn pairs of dimensions: the head width d_model / heads = ", options.width, " / ",
             options.heads, " = ", head_width, " must be even (model.transformer.d_model, model.transformer.heads)");
  return std::make_unique<RotaryPositions>();
}

}  // namespace attn::layers
