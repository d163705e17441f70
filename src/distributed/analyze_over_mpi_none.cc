// AnalyzeOverMpi in a build without MPI (CMake found no Open MPI): says what is missing.
#include "distributed/analyze_over_mpi.h"

namespace commlens::distributed {

int AnalyzeOverMpi(const MpiJob&, const RankZeroHooks& hooks) {
  return hooks.fail(
      "--mpi: this commlens was built without MPI (build it where Open MPI's development files are installed: "
      "libopenmpi-dev on Debian)",
      false);
}

}  // namespace commlens::distributed
