#include "dnnl/pieces.h"

#include "dnnl/context.h"

namespace attn::dnn {

dnnl::primitive_attr piece_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

void execute(const dnnl::primitive& primitive, const dnnl::memory::desc& scratchpad,
             std::unordered_map<int, dnnl::memory> args) {
  auto& context = Context::get();
  if (scratchpad.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, context.scratchpad(scratchpad));
  primitive.execute(context.stream(), args);
}

}  // namespace attn::dnn
