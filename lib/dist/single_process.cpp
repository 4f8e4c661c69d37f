#include "dist/communicator.h"

namespace attn::dist {

namespace {

// Alone in the world: every collective leaves the values as they are.
class SingleProcess final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void sum(float*, int64_t) override {}
  void sum(double*, int64_t) override {}
  void broadcast(void*, int64_t, int) override {}
  bool all(bool flag) override { return flag; }
  void barrier() override {}
};

}  // namespace

std::unique_ptr<Communicator> make_single_process() { return std::make_unique<SingleProcess>(); }

}  // namespace attn::dist
