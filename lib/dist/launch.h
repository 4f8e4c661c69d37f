#pragma once
// What the launcher (mpirun) told this process through its environment.
namespace attn::dist {

// The number of processes mpirun started (Open MPI's OMPI_COMM_WORLD_SIZE, or PMI_SIZE of
// MPICH's and PMIx's launchers); 1 when no launcher started this process.
int launched_world_size();

}  // namespace attn::dist
