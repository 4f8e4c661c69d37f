// attn built without MPI (ATTN_MPI=OFF, or no MPI found) but started by a launcher as one of
// several processes: each copy would train alone into the same run directory, so it refuses.
// Built only without MPI; the launcher is faked through the variable mpirun sets.
#include <filesystem>

#include <catch2/catch.hpp>

#include "apps/app_fixtures.h"

using namespace attn::testing;

TEST_CASE("attn-train built without MPI refuses to be one of several launched processes", "[cli][mpi]") {
  TempDir dir;
  const std::string config = write_tiny_setup(dir);
  Result result = run_program(dir, "attn-train", "--config " + quoted(config), "/dev/null", "OMPI_COMM_WORLD_SIZE=2");
  CHECK(result.exit_code == 1);
  CHECK(split_lines(result.err).size() == 1);
  CHECK_THAT(result.err, Catch::Contains("mpirun started 2 processes, but this attn was built without MPI"));
  CHECK_FALSE(std::filesystem::exists(dir.file("run")));
}
