// gzip compression for OutputFile (private to it). Two builds: gzip_deflater.cc with zlib,
// gzip_deflater_none.cc for the portable build, which links no zlib and refuses gzip.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string_view>

#include "common/status.h"

namespace commlens {

class GzipDeflater {
 public:
  // Hands compressed bytes on; returns false to stop (a write failed).
  using Sink = std::function<bool(const char* data, size_t n)>;

  virtual ~GzipDeflater() = default;
  [[nodiscard]] static Result<std::unique_ptr<GzipDeflater>> Create();

  // Compresses |bytes| into |sink|; with |finish|, ends the gzip stream too.
  [[nodiscard]] virtual Status Deflate(std::string_view bytes, bool finish, const Sink& sink) = 0;
};

}  // namespace commlens
