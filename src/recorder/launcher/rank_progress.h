// When a rank's collectives last progressed, read from its plugin trace while the plugin
// still writes it: the reading behind `commlens record --prometheus`'s
// commlens_last_collective_age_seconds (live_metrics.h).
//
// Each periodic flush of the plugin ends with an alive mark that carries the process's
// last progress (format.h, MarkRecord::last_progress_ns: the latest op start, or end of a
// kernel channel, proxy step or proxy op), and a session's end writes its End record last.
// So a trace's last bytes are one of:
//   - an alive mark: the rank's last progress as of that flush (kAlive);
//   - an alive mark without progress: the process has no communicator (kNoCollectives: a
//     process the CUPTI tracer records through CUDA's injection, before NCCL's first init,
//     after its last finalize, or never using NCCL);
//   - an End record: the process finalized its last communicator or is exiting (kEnded);
//   - anything else (kUnknown): a write under way, a communicator's finalize queued after
//     the flush, a file with no flush yet, a plugin older than format 1.3.
// The mark's own time is not progress: it is written every second, stuck or not.
//
// Reading the last record costs one small read per file, however long the trace grows,
// and its checksum tells a whole record from a write under way.
#pragma once

#include <cstdint>
#include <string>

namespace commlens::recorder::launcher {

struct TraceEnd {
  enum class Kind { kUnknown, kAlive, kNoCollectives, kEnded };
  Kind kind = Kind::kUnknown;
  int64_t alive_ns = 0;          // kAlive: when that flush was written (CLOCK_REALTIME)
  int64_t last_progress_ns = 0;  // kAlive: when the process's collectives last progressed
};

// The last record of the plugin trace at |path|; kUnknown also when it cannot be read.
TraceEnd ReadTraceEnd(const std::string& path);

}  // namespace commlens::recorder::launcher
