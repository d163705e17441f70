// The MPI transport of a build without MPI.
#include "bench/errors.h"
#include "bench/mpi_bootstrap.h"

namespace commlens::bench {

bool MpiSupportCompiled() { return false; }

Result<std::unique_ptr<Bootstrap>> CreateMpiBootstrap() {
  return UsageError("this build of commlens has no MPI support; use --launcher env");
}

}  // namespace commlens::bench
