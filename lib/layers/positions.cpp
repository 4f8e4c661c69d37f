#include "layers/positions.h"

#include "layers/alibi_positions.h"
#include "layers/positional_encoding.h"
#include "layers/rotary_positions.h"

namespace attn::layers {

Tensor PositionScheme::embed(Tape&, const Tensor& x, int64_t) const { return x; }

void PositionScheme::rotate_queries_keys(Tape&, Tensor&, Tensor&, int64_t) const {}

ops::AttentionBias PositionScheme::attention_bias() const { return {}; }

const std::vector<PositionSchemeEntry>& position_schemes() {
  static const std::vector<PositionSchemeEntry> table{{Positions::sinusoidal, make_sinusoidal_positions},
                                                      {Positions::learned, make_learned_positions},
                                                      {Positions::rotary, make_rotary_positions},
                                                      {Positions::alibi, make_alibi_positions}};
  return table;
}

std::unique_ptr<PositionScheme> make_position_scheme(Positions positions, ParameterStore& store,
                                                     const std::string& name, const PositionSchemeOptions& options) {
  for (const auto& entry : position_schemes())
    if (entry.positions == positions) return entry.make(store, name, options);
  throw Error(std::string("no position scheme registered for model.transformer.positions \"") + choice_name(positions) +
              "\"");
}

}  // namespace attn::layers
