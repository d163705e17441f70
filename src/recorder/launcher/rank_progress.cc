#include "recorder/launcher/rank_progress.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <span>

#include "native_format/format.h"
#include "native_format/record_reader.h"

namespace commlens::recorder::launcher {

namespace {

namespace nf = native_format;

constexpr size_t kAliveBytes = sizeof(nf::RecordHeader) + sizeof(nf::MarkRecord);
constexpr size_t kEndBytes = sizeof(nf::RecordHeader) + sizeof(nf::EndRecord);
static_assert(kAliveBytes >= kEndBytes);

// True when |bytes| is exactly one whole record of |type| (checksum included).
bool IsOneRecord(std::span<const uint8_t> bytes, nf::RecordType type, nf::RecordView* r) {
  nf::RecordReader reader(bytes, 0);
  return reader.Next(r) == nf::ReadStatus::kRecord && reader.offset() == bytes.size() &&
         r->type == static_cast<uint16_t>(type);
}

}  // namespace

TraceEnd ReadTraceEnd(const std::string& path) {
  TraceEnd end;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return end;
  struct stat st;
  uint8_t tail[kAliveBytes];
  const bool read = fstat(fd, &st) == 0 && st.st_size >= static_cast<off_t>(sizeof(nf::FileHeader) + kAliveBytes) &&
                    pread(fd, tail, sizeof tail, st.st_size - static_cast<off_t>(sizeof tail)) ==
                        static_cast<ssize_t>(sizeof tail);
  close(fd);
  if (!read) return end;
  const std::span<const uint8_t> bytes(tail, sizeof tail);
  nf::RecordView r;
  if (IsOneRecord(bytes.last(kEndBytes), nf::RecordType::kEnd, &r)) {
    end.kind = TraceEnd::Kind::kEnded;
    return end;
  }
  nf::MarkRecord mark;
  if (IsOneRecord(bytes, nf::RecordType::kMark, &r) && nf::DecodePayload(r, &mark) &&
      mark.what == static_cast<uint32_t>(nf::MarkKind::kAlive) && r.payload.size() >= sizeof(nf::MarkRecord)) {
    end.kind = mark.last_progress_ns > 0 ? TraceEnd::Kind::kAlive : TraceEnd::Kind::kNoCollectives;
    end.alive_ns = mark.time_ns;
    end.last_progress_ns = mark.last_progress_ns;
  }
  return end;
}

}  // namespace commlens::recorder::launcher
