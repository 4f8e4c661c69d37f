#pragma once
// Communicator: the processes of one data-parallel training run (MPI ranks).
//
// Every rank computes the gradients of its shard of each batch; `sum` then leaves the same
// summed flat gradient buffer on every rank, so the identical optimizer step keeps the ranks'
// parameters identical. Rank 0 alone logs, validates and writes the run directory.
//
// world() is this process's communicator: MPI's COMM_WORLD when attn was built with MPI
// (ATTN_MPI) and the process was started by mpirun, otherwise a world of one process, where
// every collective is a no-op. So one binary trains alone and over ranks.
#include <cstdint>
#include <memory>
#include <string>

namespace attn::dist {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  bool is_root() const { return rank() == 0; }

  // In place, element-wise sum over all ranks; every rank ends with the same values.
  virtual void sum(float* values, int64_t count) = 0;
  virtual void sum(double* values, int64_t count) = 0;
  // Rank `root`'s `bytes` replace every other rank's.
  virtual void broadcast(void* bytes, int64_t count, int root) = 0;
  // Whether `flag` holds on every rank (the answer is the same on all of them).
  virtual bool all(bool flag) = 0;
  virtual void barrier() = 0;

  // Rank 0's string, on every rank.
  std::string broadcast_string(std::string text, int root = 0);
};

// A world of one process.
std::unique_ptr<Communicator> make_single_process();

// Owns the process's place in the world: starts MPI when mpirun launched this process and ends
// it on destruction. One per program, made in main before anything calls world(). Throws
// attn::Error when mpirun started several processes but attn was built without MPI (each
// would otherwise train alone into the same run directory).
class WorldSession {
 public:
  WorldSession(int* argc, char*** argv);
  ~WorldSession();
  // The program's exit code, passed through. A failure on one rank of several aborts them all
  // (MPI_Abort): the others may be waiting for it in a collective and would hang otherwise.
  int finish(int exit_code);
  WorldSession(const WorldSession&) = delete;
  WorldSession& operator=(const WorldSession&) = delete;
};

// The process's communicator (a world of one until a WorldSession starts MPI).
Communicator& world();

// Whether this binary was built with MPI.
bool built_with_mpi();

}  // namespace attn::dist
