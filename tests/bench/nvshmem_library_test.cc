// The NVSHMEM backend's loader where NVSHMEM is absent (ctest clears LD_LIBRARY_PATH and
// NVSHMEM_HOME): a clear error naming the library and where to point, never a crash.
#include "bench/gpu/nvshmem_library.h"

#include <gtest/gtest.h>

namespace commlens::bench::gpu {
namespace {

TEST(NvshmemLibrary, MissingHostLibraryIsNamed) {
  Result<const commlens_nvshmem_api*> api = LoadNvshmem();
  if (api.ok()) GTEST_SKIP() << "NVSHMEM is installed here";
  const std::string& m = api.status().message();
  EXPECT_NE(m.find("libnvshmem_host.so.3"), std::string::npos) << m;
  EXPECT_NE(m.find("LD_LIBRARY_PATH"), std::string::npos) << m;
  EXPECT_NE(m.find("NVSHMEM_HOME"), std::string::npos) << m;
  // Asking again gives the same answer without retrying the load.
  EXPECT_EQ(LoadNvshmem().status().message(), m);
}

}  // namespace
}  // namespace commlens::bench::gpu
