// RunOverMpi in a build without MPI (CMake found no Open MPI): says what is missing.
#include <fmt/format.h>

#include "cli/mpi_job.h"
#include "cli/verbs.h"

namespace commlens::cli {

int RunOverMpi(const JobInputs&, const analysis::AnalyzeOptions&, std::string_view verb, bool,
               const std::function<int(const model::Trace&, const analysis::JobAnalysis&)>&) {
  fmt::print(stderr,
             "commlens {}: --mpi: this commlens was built without MPI (build it where Open MPI's "
             "development files are installed: libopenmpi-dev on Debian)\n",
             verb);
  return kExitFailed;
}

}  // namespace commlens::cli
