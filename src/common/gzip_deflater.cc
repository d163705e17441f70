#include "common/gzip_deflater.h"

#include <zlib.h>

namespace commlens {

namespace {

class ZlibDeflater final : public GzipDeflater {
 public:
  ~ZlibDeflater() override {
    if (started_) deflateEnd(&zs_);
  }

  Status Start() {
    // Level 1: the trace is written faster than it was read; level 6 takes 2.5x the time
    // for 15% smaller files. 15 + 16: a 32 KiB window, gzip framing.
    if (deflateInit2(&zs_, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
      return Error("cannot initialise zlib");
    started_ = true;
    return OkStatus();
  }

  Status Deflate(std::string_view bytes, bool finish, const Sink& sink) override {
    zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    zs_.avail_in = static_cast<uInt>(bytes.size());
    const int flush = finish ? Z_FINISH : Z_NO_FLUSH;
    while (true) {
      zs_.next_out = reinterpret_cast<Bytef*>(out_);
      zs_.avail_out = sizeof(out_);
      const int rc = deflate(&zs_, flush);
      if (rc == Z_STREAM_ERROR) return Error("zlib stream error");
      const size_t n = sizeof(out_) - zs_.avail_out;
      if (n > 0 && !sink(out_, n)) return OkStatus();  // the sink keeps its own error
      if (finish ? rc == Z_STREAM_END : zs_.avail_in == 0 && zs_.avail_out > 0) return OkStatus();
    }
  }

 private:
  z_stream zs_{};
  bool started_ = false;
  char out_[1 << 16];
};

}  // namespace

Result<std::unique_ptr<GzipDeflater>> GzipDeflater::Create() {
  auto d = std::make_unique<ZlibDeflater>();
  COMMLENS_RETURN_IF_ERROR(d->Start());
  return std::unique_ptr<GzipDeflater>(std::move(d));
}

}  // namespace commlens
