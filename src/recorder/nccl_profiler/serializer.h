// Turns drained slots into native-trace records (format.h). Runs on the flusher thread
// only (or in finalize, under the same lock), so it may allocate and keep maps.
//
// Strings arrive as NCCL's static C strings; each distinct pointer is read once,
// interned by content, and its String record is emitted into |strings|, which the
// session writes before |body| so every id is defined before its first use.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "native_format/record_writer.h"
#include "recorder/nccl_profiler/context.h"

namespace commlens::recorder {

class Serializer {
 public:
  // Emits the Comm record (first time only), then every finished event of |ctx|, then
  // its cumulative stats when they changed (always when |final|). |seq_gaps| is the
  // session's count of counting stops.
  void SerializeContext(Context& ctx, uint64_t seq_gaps, bool final,
                        native_format::RecordWriter& strings, native_format::RecordWriter& body);

  uint32_t InternText(std::string_view text, native_format::RecordWriter& strings);

  // Told each KernelLaunch event's stream as it is written (the CUPTI tracer names the
  // stream once: Tracer::NoteLaunchStream). On the flusher's thread.
  std::function<void(uint64_t stream)> on_launch_stream;
  uint32_t InternPointer(const char* s, native_format::RecordWriter& strings);

 private:
  void WriteOps(Context& ctx, native_format::RecordWriter& strings, native_format::RecordWriter& body);
  void WriteKernelTimings(Context& ctx, native_format::RecordWriter& body);
  void WriteProxyOps(Context& ctx, native_format::RecordWriter& body);
  void WriteApis(Context& ctx, native_format::RecordWriter& strings, native_format::RecordWriter& body);
  void WriteStats(Context& ctx, uint64_t seq_gaps, bool force, native_format::RecordWriter& body);

  std::unordered_map<const char*, uint32_t> by_pointer_;
  std::unordered_map<std::string, uint32_t> by_text_;
  uint32_t next_id_ = 1;  // 0 is "no string"
  std::vector<KernelData> kernel_scratch_;
};

}  // namespace commlens::recorder
