// The CUPTI tracer's records of a native trace (format 1.4: GpuActivity, CudaApi, Range,
// Tracer; 1.6: StreamId; docs/formats.md) into the trace model, as the Kineto and Nsight readers fill it:
// GPU activities (kernels, copies, sets, syncs) with their streams and correlation ids,
// the CUDA runtime and driver calls that launched them (the link_launches pass joins the
// two), and NVTX ranges and marks of every domain as annotations. The tracer's last state
// becomes a note (it stepped aside for another CUPTI client; records CUPTI dropped).
//
// Checks: a record whose end comes before its start, or whose times fall outside
// +-2^62 ns, is counted (negative_duration, bad_record) and left out; the rest of the
// file still loads.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/trace.h"
#include "native_format/format.h"
#include "native_format/record_reader.h"

namespace commlens::importers::native {

class CuptiRecords {
 public:
  // Decodes one tracer record; a short or damaged one is counted in |stats| and skipped.
  void Decode(const native_format::RecordView& r, model::ImportStats* stats);
  // Appends the rows to |t| (GPU activities and annotations sorted by start; CUDA calls
  // as host events of process |pid|), and the tracer's notes.
  void Fill(const std::function<std::string(uint32_t)>& text, int32_t pid, model::RankTrace* t) const;
  // CUPTI's id of each stream NCCL launched on (format 1.6), by cudaStream_t value.
  const std::vector<native_format::StreamIdRecord>& stream_ids() const { return streams_; }
  // Whether the tracer recorded CUDA calls (else its activities have no launch in the file).
  bool has_cuda_calls() const { return !api_.empty(); }

 private:
  std::vector<native_format::GpuActivityRecord> gpu_;
  std::vector<native_format::CudaApiRecord> api_;
  std::vector<native_format::RangeRecord> ranges_;
  std::vector<native_format::StreamIdRecord> streams_;
  std::optional<native_format::TracerRecord> tracer_;  // the last one: its counters are cumulative
};

}  // namespace commlens::importers::native
