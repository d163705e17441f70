// CUPTI's activity records (cupti_activity.h, CUDA 13) in the native format's terms, for
// the tracer's sink: kernels, copies (peer copies too), sets and syncs as GpuActivity
// records; runtime and driver calls as CudaApi records; NVTX markers as Range records.
//
// Kernel names are demangled, as Kineto and Nsight show them. What needs state is kept
// here: a range arrives as two marker records, START (with the name and domain) and END,
// sharing an id, in either order, so the first waits for the other; a sync record has no
// device, so its context's is used (from CONTEXT records, or any activity of the context;
// -1 while unknown). Records CUPTI could not time (start 0) are left out. Times are taken
// as CUPTI gives them: the backend has CUPTI stamp them on CLOCK_REALTIME ns, the file's
// clock. Only fields every record version of a kind shares at the same place are read.
//
// Built with the CUDA toolkit's headers only (no CUPTI call is made here).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <cupti_activity.h>

#include "common/strings.h"
#include "recorder/cupti_tracer/activity_backend.h"

namespace commlens::recorder::cupti {

class Translator {
 public:
  // The name of a runtime (|runtime|) or driver call by its callback id
  // (cuptiGetCallbackName in a real process).
  using ApiName = std::function<std::string(bool runtime, uint32_t cbid)>;
  explicit Translator(ApiName api_name) : api_name_(std::move(api_name)) {}

  // One record; kinds it does not translate are ignored. Returns whether it reached the
  // sink.
  bool Translate(const CUpti_Activity* record, ActivitySink* sink);
  // Ranges still open (a START without its END yet).
  size_t open_ranges() const { return open_.size(); }

 private:
  static constexpr size_t kMaxOpen = 1 << 16;   // markers waiting for their other half
  static constexpr size_t kMaxNames = 1 << 16;  // kernel names kept demangled
  struct Open {
    int64_t time;
    int32_t tid;
    bool is_start;
    std::string name, domain;  // the START's
  };
  // A kernel's name as Kineto and Nsight show it (demangled: CUPTI gives the mangled one).
  std::string_view KernelName(const char* mangled);
  // |device|, noted as its context's.
  int32_t DeviceOf(uint32_t context, uint32_t device);

  ApiName api_name_;
  std::unordered_map<std::string, std::string, StringViewHash, std::equal_to<>> names_;  // mangled -> demangled
  uint32_t last_context_ = UINT32_MAX;  // DeviceOf's: the context last noted
  std::unordered_map<uint64_t, Open> open_;             // marker id -> the half seen first
  std::unordered_map<uint32_t, int32_t> device_of_;     // context id -> device
};

}  // namespace commlens::recorder::cupti
