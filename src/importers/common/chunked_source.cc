#include "importers/common/chunked_source.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "common/file.h"
#include "common/strings.h"
#include "importers/common/gzip_inflater.h"

namespace commlens::importers {

// Compressed bytes live in |in| (the file's chunk buffer, or the caller's memory): the
// unread ones are [next, next + avail), at compressed offset |base + (next - in)|.
struct ChunkedSource::State {
  std::string name;
  std::optional<ReadableFile> file;
  std::unique_ptr<char[]> chunk;  // file mode only
  const char* in = nullptr;
  size_t in_len = 0;              // bytes of |in| filled
  const char* next = nullptr;
  uint64_t base = 0;              // compressed offset of in[0]
  uint64_t file_bytes = 0;
  bool input_done = false;        // nothing left to read into |in|
  bool gzipped = false;
  bool finished = false;          // the last gzip member ended
  uint64_t decoded = 0;
  std::unique_ptr<GzipInflater> inflater;  // gzipped input only
  size_t avail() const { return in_len - static_cast<size_t>(next - in); }

  // Makes more compressed bytes available after the unread ones. False when none are.
  Result<bool> Refill() {
    if (input_done) return false;
    size_t left = avail();
    if (!file) {  // memory: |in| is all of it already
      input_done = true;
      return false;
    }
    std::memmove(chunk.get(), next, left);
    base += static_cast<uint64_t>(next - in);
    next = in;
    Result<size_t> got = file->Read(chunk.get() + left, kChunkBytes - left);
    if (!got.ok()) return Error(name + ": " + got.status().message());
    in_len = left + *got;
    if (*got < kChunkBytes - left) input_done = true;
    return *got > 0;
  }

  uint64_t Offset() const { return base + static_cast<uint64_t>(next - in); }

  Status Truncated() const {
    return Error(name + ": gzip data ends early (truncated file) after " + std::to_string(file_bytes) +
                 " compressed bytes, " + std::to_string(decoded) + " bytes decoded");
  }

  Result<size_t> Inflate(char* out, size_t n) {
    size_t produced = 0;
    while (produced < n && !finished) {
      if (avail() == 0) {
        COMMLENS_ASSIGN_OR_RETURN(bool more, Refill());
        if (!more && avail() == 0) return Truncated();
      }
      GzipInflater::Step step = inflater->Inflate(next, avail(), out + produced, n - produced);
      next += step.consumed;
      produced += step.produced;
      decoded += step.produced;
      if (step.error)
        return Error(name + ": gzip error at compressed byte " + std::to_string(Offset()) + ": " + step.error);
      if (step.member_end) {
        // Another member may follow (concatenated gzip files are valid gzip); anything
        // else after the last member is ignored, as gzip does.
        if (avail() < 2) COMMLENS_RETURN_IF_ERROR(Refill().status());
        if (avail() >= 2 && static_cast<unsigned char>(next[0]) == 0x1f &&
            static_cast<unsigned char>(next[1]) == 0x8b) {
          inflater->NextMember();
        } else {
          finished = true;
        }
        continue;
      }
      if (step.consumed == 0 && step.produced == 0) {  // the engine needs more input than is here
        COMMLENS_ASSIGN_OR_RETURN(bool more, Refill());
        if (!more) return Truncated();
      }
    }
    return produced;
  }

  Result<size_t> Copy(char* out, size_t n) {
    size_t produced = std::min(n, avail());
    std::memcpy(out, next, produced);
    next += produced;
    if (produced < n && file && !input_done) {
      Result<size_t> got = file->Read(out + produced, n - produced);
      if (!got.ok()) return Error(name + ": " + got.status().message());
      if (*got < n - produced) input_done = true;
      produced += *got;
    }
    decoded += produced;
    return produced;
  }
};

namespace {

bool HasGzipMagic(const char* p, size_t n) {
  return n >= 2 && static_cast<unsigned char>(p[0]) == 0x1f && static_cast<unsigned char>(p[1]) == 0x8b;
}

}  // namespace

ChunkedSource::ChunkedSource(std::unique_ptr<State> state) : s_(std::move(state)) {}
ChunkedSource::ChunkedSource(ChunkedSource&&) noexcept = default;
ChunkedSource::~ChunkedSource() = default;

Result<ChunkedSource> ChunkedSource::Open(const std::string& path) {
  COMMLENS_ASSIGN_OR_RETURN(ReadableFile f, ReadableFile::Open(path));
  auto s = std::make_unique<State>();
  s->name = path;
  s->file_bytes = f.size();
  s->file.emplace(std::move(f));
  s->chunk = std::make_unique_for_overwrite<char[]>(kChunkBytes);
  s->in = s->next = s->chunk.get();
  COMMLENS_RETURN_IF_ERROR(s->Refill().status());
  return Start(std::move(s));
}

Result<ChunkedSource> ChunkedSource::FromMemory(std::string_view bytes, const std::string& name) {
  auto s = std::make_unique<State>();
  s->name = name;
  s->file_bytes = bytes.size();
  s->in = s->next = bytes.data();
  s->in_len = bytes.size();
  s->input_done = true;
  return Start(std::move(s));
}

Result<ChunkedSource> ChunkedSource::Start(std::unique_ptr<State> s) {
  s->gzipped = HasGzipMagic(s->next, s->avail());
  if (!s->gzipped && EndsWith(s->name, ".gz"))
    return Error(s->name + ": named .gz but is not gzip data (no gzip magic at byte 0)");
  if (s->gzipped) {
    s->inflater = std::make_unique<GzipInflater>();
    if (!s->inflater->ok()) return Error(s->name + ": cannot start the gzip decoder");
  }
  return ChunkedSource(std::move(s));
}

Result<size_t> ChunkedSource::Read(char* out, size_t n) {
  return s_->gzipped ? s_->Inflate(out, n) : s_->Copy(out, n);
}

bool ChunkedSource::gzipped() const { return s_->gzipped; }
uint64_t ChunkedSource::file_bytes() const { return s_->file_bytes; }
uint64_t ChunkedSource::decoded_bytes() const { return s_->decoded; }

}  // namespace commlens::importers
