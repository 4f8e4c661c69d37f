// Built when CMake found no MPI (or ATTN_MPI=OFF): attn trains as one process.
#include <cstdlib>

#include "core/check.h"
#include "dist/launch.h"
#include "dist/mpi_backend.h"

namespace attn::dist {

bool built_with_mpi() { return false; }

std::unique_ptr<Communicator> start_mpi(int*, char***) {
  throw Error("mpirun started " + std::to_string(launched_world_size()) +
              " processes, but this attn was built without MPI: install libopenmpi-dev and rebuild "
              "(CMake option ATTN_MPI)");
}

void stop_mpi() {}

void abort_mpi(int exit_code) { std::exit(exit_code); }

}  // namespace attn::dist
