#pragma once
// The two builds' MPI back ends behind WorldSession: mpi_communicator.cpp when CMake found MPI
// (ATTN_MPI), no_mpi.cpp otherwise. Internal to dist/.
#include <memory>

#include "dist/communicator.h"

namespace attn::dist {

// MPI_Init and COMM_WORLD's communicator; throws attn::Error without MPI.
std::unique_ptr<Communicator> start_mpi(int* argc, char*** argv);
// MPI_Finalize.
void stop_mpi();
// MPI_Abort of every rank with `exit_code`; does not return.
[[noreturn]] void abort_mpi(int exit_code);

}  // namespace attn::dist
