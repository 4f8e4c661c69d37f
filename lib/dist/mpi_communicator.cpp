// Built when CMake found MPI (ATTN_MPI): COMM_WORLD as attn's Communicator.
#include <algorithm>
#include <cstdlib>
#include <mpi.h>
#include <string>

#include "core/check.h"
#include "dist/mpi_backend.h"

namespace attn::dist {

namespace {

// Large buffers go in buckets of this many elements: MPI counts are ints, and a bounded
// message keeps MPI's internal staging buffers bounded too.
constexpr int64_t kBucketElements = int64_t(1) << 22;  // 16 MiB of f32

// Errors come back as codes (MPI_ERRORS_RETURN) and become attn::Error with this rank's view.
void check_mpi(int code, const char* call, int rank) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw Error(std::string(call) + " failed on rank " + std::to_string(rank) + ": " + std::string(text, length) +
              " (did another rank die? mpirun's message names it)");
}

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void sum(float* values, int64_t count) override { sum_in_buckets(values, count, MPI_FLOAT); }
  void sum(double* values, int64_t count) override { sum_in_buckets(values, count, MPI_DOUBLE); }

  void broadcast(void* bytes, int64_t count, int root) override {
    auto* data = static_cast<char*>(bytes);
    for (int64_t first = 0; first < count; first += kBucketElements) {
      int n = int(std::min(kBucketElements, count - first));
      check_mpi(MPI_Bcast(data + first, n, MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast", rank_);
    }
  }

  bool all(bool flag) override {
    int value = flag ? 1 : 0;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD), "MPI_Allreduce", rank_);
    return value != 0;
  }

  void barrier() override { check_mpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier", rank_); }

 private:
  template <typename T>
  void sum_in_buckets(T* values, int64_t count, MPI_Datatype type) {
    for (int64_t first = 0; first < count; first += kBucketElements) {
      int n = int(std::min(kBucketElements, count - first));
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, values + first, n, type, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce", rank_);
    }
  }

  int rank_ = 0, size_ = 1;
};

}  // namespace

bool built_with_mpi() { return true; }

std::unique_ptr<Communicator> start_mpi(int* argc, char*** argv) {
  int provided = 0;
  // Only the main thread calls MPI; OpenMP threads never do.
  ATTN_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) == MPI_SUCCESS, "MPI_Init_thread failed");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return std::make_unique<MpiCommunicator>();
}

void stop_mpi() { MPI_Finalize(); }

void abort_mpi(int exit_code) {
  MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::abort();  // MPI_Abort does not return; this tells the compiler so
}

}  // namespace attn::dist
