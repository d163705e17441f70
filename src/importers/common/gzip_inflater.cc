#include "importers/common/gzip_inflater.h"

#include <algorithm>
#include <climits>

#if COMMLENS_HAVE_ISAL
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

namespace commlens::importers {

namespace {
// Both engines count in 32-bit lengths.
size_t Clamp(size_t n) { return std::min<size_t>(n, UINT_MAX >> 1); }
}  // namespace

#if COMMLENS_HAVE_ISAL

struct GzipInflater::Impl {
  inflate_state state;
  void Start() {
    isal_inflate_init(&state);
    state.crc_flag = ISAL_GZIP;  // header parsed, CRC32 and length of the trailer checked
  }
};

GzipInflater::GzipInflater() : impl_(std::make_unique<Impl>()) { impl_->Start(); }
GzipInflater::~GzipInflater() = default;
bool GzipInflater::ok() const { return impl_ != nullptr; }
const char* GzipInflater::Engine() { return "isa-l"; }

void GzipInflater::NextMember() { impl_->Start(); }

GzipInflater::Step GzipInflater::Inflate(const char* in, size_t in_len, char* out, size_t out_len) {
  inflate_state& s = impl_->state;
  s.next_in = reinterpret_cast<uint8_t*>(const_cast<char*>(in));
  s.avail_in = static_cast<uint32_t>(Clamp(in_len));
  s.next_out = reinterpret_cast<uint8_t*>(out);
  s.avail_out = static_cast<uint32_t>(Clamp(out_len));
  const uint32_t fed = s.avail_in, room = s.avail_out;
  int rc = isal_inflate(&s);
  Step step;
  step.consumed = fed - s.avail_in;
  step.produced = room - s.avail_out;
  switch (rc) {
    case ISAL_DECOMP_OK:
    case ISAL_END_INPUT:
    case ISAL_OUT_OVERFLOW:
      break;
    case ISAL_INVALID_BLOCK: step.error = "invalid deflate block"; break;
    case ISAL_INVALID_SYMBOL: step.error = "invalid deflate symbol"; break;
    case ISAL_INVALID_LOOKBACK: step.error = "invalid distance too far back"; break;
    case ISAL_INVALID_WRAPPER: step.error = "invalid gzip header"; break;
    case ISAL_UNSUPPORTED_METHOD: step.error = "unknown compression method"; break;
    case ISAL_INCORRECT_CHECKSUM: step.error = "incorrect data check (CRC32 or length)"; break;
    default: step.error = "corrupt data"; break;
  }
  step.member_end = step.error == nullptr && s.block_state == ISAL_BLOCK_FINISH;
  return step;
}

#else  // zlib

struct GzipInflater::Impl {
  z_stream zs{};
  bool ready = false;
  ~Impl() {
    if (ready) inflateEnd(&zs);
  }
};

GzipInflater::GzipInflater() : impl_(std::make_unique<Impl>()) {
  impl_->ready = inflateInit2(&impl_->zs, 15 + 16) == Z_OK;  // gzip wrapper only
}
GzipInflater::~GzipInflater() = default;
bool GzipInflater::ok() const { return impl_->ready; }
const char* GzipInflater::Engine() { return "zlib"; }

void GzipInflater::NextMember() { inflateReset(&impl_->zs); }

GzipInflater::Step GzipInflater::Inflate(const char* in, size_t in_len, char* out, size_t out_len) {
  z_stream& zs = impl_->zs;
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in));
  zs.avail_in = static_cast<uInt>(Clamp(in_len));
  zs.next_out = reinterpret_cast<Bytef*>(out);
  zs.avail_out = static_cast<uInt>(Clamp(out_len));
  const uInt fed = zs.avail_in, room = zs.avail_out;
  int rc = inflate(&zs, Z_NO_FLUSH);
  Step step;
  step.consumed = fed - zs.avail_in;
  step.produced = room - zs.avail_out;
  if (rc == Z_STREAM_END) step.member_end = true;
  else if (rc != Z_OK && rc != Z_BUF_ERROR) step.error = zs.msg ? zs.msg : "corrupt data";
  return step;
}

#endif

}  // namespace commlens::importers
