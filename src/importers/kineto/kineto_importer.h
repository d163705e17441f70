// Kineto (PyTorch profiler) Chrome-trace JSON importer.
//
// Pipeline: the file is decoded in chunks (gunzipped on the fly, common/chunked_source.h)
// into one window of a few MB per thread; the tokenizer (kineto_tokenizer.h) finds where
// the events of "traceEvents" end, and simdjson's on-demand parser reads each run of
// complete events in the window (kineto_stream_importer.cc); each event is decoded into a
// small |KinetoEvent| of views into the window (the parser, kineto_event.h); the table
// writer (kineto_table_writer.h) appends typed rows to the rank's columnar tables.
// Nothing is copied per event but the interned strings, and memory is the window plus
// the model, whatever the file's size. ImportKinetoTrace reads a whole document held in
// memory instead, one simdjson pass (kineto_importer.cc): the reference the streaming
// reader is tested and fuzzed against.
//
// Errors: a file that is not JSON, not a Kineto trace, or cut short fails with a message
// naming the file and the byte offset; a single bad event is counted in RankTrace::stats
// and skipped. Bytes that are not UTF-8 inside strings are read as U+FFFD and counted
// (invalid_utf8, at their offset in the decoded file): the event keeps its repaired name
// (kineto_utf8.h).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "importers/common/chunked_source.h"
#include "importers/common/input_file.h"
#include "model/trace.h"

namespace commlens::importers {

// True when |head| (the first bytes of a decoded file) looks like a Kineto or Chrome-trace
// JSON: an object with a trace's top-level keys, or one too long to tell (kineto_sniff.cc).
bool LooksLikeKinetoTrace(std::string_view head);

// Imports one rank's trace. The rank is taken from distributedInfo; when absent it is
// left at -1 (the loader falls back to the file name and says so).
Result<model::RankTrace> ImportKinetoTrace(const InputBuffer& input, const std::string& name);

struct KinetoStreamOptions {
  // Decoded bytes per window (grown only for an event larger than it). The parser's
  // index for a window is ~5x its size, so a window of a few MB keeps a rank within
  // ~tens of MB beside its model.
  size_t window_bytes = size_t{2} << 20;
  // Keep of the host events only what the per-rank passes and analyze read
  // (KinetoTableWriter; model/host_events.h drops the rest after the passes).
  bool drop_host_events = false;
};

// Imports one rank's trace from |path| in bounded memory: the same model as
// ImportKinetoTrace on the file's decoded bytes, and the same errors.
Result<model::RankTrace> StreamKinetoTrace(const std::string& path, const KinetoStreamOptions& options = {});
// The same from an open source; |name| is used in messages.
Result<model::RankTrace> StreamKinetoTrace(ChunkedSource& source, const std::string& name,
                                           const KinetoStreamOptions& options = {});

}  // namespace commlens::importers
