// The portable build links no zlib (CMakeLists.txt, COMMLENS_PORTABLE).
#include "common/gzip_deflater.h"

namespace commlens {

Result<std::unique_ptr<GzipDeflater>> GzipDeflater::Create() {
  return Error("this commlens was built without zlib (portable build): it cannot write gzip");
}

}  // namespace commlens
