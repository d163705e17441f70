// The job as one Chrome trace JSON file for ui.perfetto.dev and chrome://tracing.
//
// Layout: a process per rank ("rank N (host)", sorted by rank); in it a track per host
// thread (named as the source names it) and a track per GPU stream ("GPU d stream s"),
// and for recordings without kernel timelines one "NCCL ops" track. Every kernel, memcpy
// and memset kept by the selection is a complete slice with Kineto's categories
// (kernel, gpu_memcpy, gpu_memset); communication kernels carry the collective's
// arguments (op, bytes, process group, sequence number, algbw, busbw, the time this rank
// waited for the last one). Flow arrows join the ranks' slices of one matched collective
// (or the two ends of a message) in the order the ranks arrived, so each chain ends at
// the rank the others waited for; they come from the matched-ops table. Host
// annotations and profiler steps are slices on their threads (GPU-side ones on their
// stream); counter series are counter tracks (host- and NIC-owned ones in a process of
// their host). Times are microseconds with nanosecond decimals.
//
// Streamed: the file is written event by event through a bounded buffer (OutputFile),
// never held as a document. Strings are escaped by the JSON library, once per distinct
// string.
#pragma once

#include <string>

#include "exporters/export.h"

namespace commlens::exporters {

// Writes |path| (gzip-compressed when it ends in ".gz"). Returns the number of events
// written through |events| when not null.
Status WritePerfetto(const model::Trace& trace, const std::string& path, const ExportOptions& options,
                     uint64_t* events = nullptr);

// Track ids of GPU streams inside a rank's process (host thread ids are kept as they are).
constexpr int64_t kGpuTrackBase = 1'000'000'000;
constexpr int64_t GpuTrackId(int32_t device, int32_t stream) {
  return kGpuTrackBase + int64_t{device} * 1'000'000 + stream;
}
constexpr int64_t kNcclOpsTrack = kGpuTrackBase - 1;

}  // namespace commlens::exporters
