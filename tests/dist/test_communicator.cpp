// The communicator of a process started without mpirun, and how a process learns from its
// environment that mpirun started it (the multi-rank paths run in tests/apps/test_mpi.cpp).
#include <cstdlib>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "dist/communicator.h"
#include "dist/launch.h"

using namespace attn;

namespace {

// Sets (or unsets, with nullptr) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { had_ ? setenv(name_.c_str(), old_.c_str(), 1) : unsetenv(name_.c_str()); }

 private:
  std::string name_, old_;
  bool had_ = false;
};

}  // namespace

TEST_CASE("a process started without mpirun is a world of one that leaves values alone", "[dist]") {
  dist::Communicator& world = dist::world();
  CHECK(world.rank() == 0);
  CHECK(world.size() == 1);
  CHECK(world.is_root());
  std::vector<float> values = {1.5f, -2.f, 3.25f};
  world.sum(values.data(), int64_t(values.size()));
  CHECK(values == std::vector<float>{1.5f, -2.f, 3.25f});
  CHECK(world.all(true));
  CHECK_FALSE(world.all(false));
  CHECK(world.broadcast_string(std::string("rank 0's words")) == "rank 0's words");
}

TEST_CASE("the launcher's world size is read from Open MPI's or PMI's variables", "[dist]") {
  ScopedEnv pmi_size("PMI_SIZE", nullptr), pmix_size("PMIX_SIZE", nullptr);
  {
    ScopedEnv size("OMPI_COMM_WORLD_SIZE", nullptr);
    CHECK(dist::launched_world_size() == 1);
  }
  {
    ScopedEnv size("OMPI_COMM_WORLD_SIZE", "4");
    CHECK(dist::launched_world_size() == 4);
  }
  {
    ScopedEnv size("OMPI_COMM_WORLD_SIZE", nullptr), pmi("PMI_SIZE", "3");
    CHECK(dist::launched_world_size() == 3);
  }
  {
    ScopedEnv size("OMPI_COMM_WORLD_SIZE", "not a number");
    CHECK(dist::launched_world_size() == 1);
  }
}

TEST_CASE("a world session outside mpirun starts no MPI and passes exit codes through", "[dist]") {
  ScopedEnv ompi("OMPI_COMM_WORLD_SIZE", nullptr), pmi("PMI_SIZE", nullptr), pmix("PMIX_SIZE", nullptr);
  int argc = 1;
  char name[] = "attn_tests";
  char* args[] = {name, nullptr};
  char** argv = args;
  dist::WorldSession session(&argc, &argv);
  CHECK(dist::world().size() == 1);
  CHECK(session.finish(0) == 0);
  CHECK(session.finish(3) == 3);
}
