// The MPI transport of the bootstrap (bootstrap.h), for runs started by mpirun in builds
// that link Open MPI (not the portable build: there, --launcher env reads mpirun's
// variables and uses the TCP rendezvous instead). MPI calls cannot time out; the
// driver arms its watchdog around them.
#pragma once

#include <memory>

#include "bench/bootstrap.h"
#include "common/status.h"

namespace commlens::bench {

bool MpiSupportCompiled();
// Initializes MPI (unless already initialized) and finalizes it when destroyed.
Result<std::unique_ptr<Bootstrap>> CreateMpiBootstrap();

}  // namespace commlens::bench
