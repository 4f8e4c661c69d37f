#include <cstdio>
#include <cstdlib>

#include "core/check.h"
#include "dist/communicator.h"
#include "dist/launch.h"
#include "dist/mpi_backend.h"

namespace attn::dist {

namespace {

std::unique_ptr<Communicator>& current() {
  static std::unique_ptr<Communicator> communicator = make_single_process();
  return communicator;
}

bool mpi_started = false;

}  // namespace

WorldSession::WorldSession(int* argc, char*** argv) {
  if (launched_world_size() <= 1) return;  // alone (mpirun -np 1 included): no MPI needed
  try {
    current() = start_mpi(argc, argv);
  } catch (const Error& error) {
    // Before any program body runs, so before its error boundary: say it and stop here.
    std::fprintf(stderr, "attn: error: %s\n", error.what());
    std::exit(1);
  }
  mpi_started = true;
}

WorldSession::~WorldSession() {
  if (!mpi_started) return;
  current() = make_single_process();
  stop_mpi();
  mpi_started = false;
}

int WorldSession::finish(int exit_code) {
  if (exit_code != 0 && mpi_started && world().size() > 1) abort_mpi(exit_code);
  return exit_code;
}

Communicator& world() { return *current(); }

std::string Communicator::broadcast_string(std::string text, int root) {
  uint64_t length = text.size();
  broadcast(&length, sizeof length, root);
  text.resize(length);
  broadcast(text.data(), int64_t(length), root);
  return text;
}

}  // namespace attn::dist
