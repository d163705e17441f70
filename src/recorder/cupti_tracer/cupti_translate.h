// CUPTI's activity records (cupti_activity.h, CUDA 13) in the native format's terms, for
// the tracer's sink: kernels, copies (peer copies too), sets and syncs as GpuActivity
// records; runtime and driver calls as CudaApi records; NVTX markers as Range records.
//
// Kernel names are demangled, as Kineto and Nsight show them. What needs state is kept here: a range arrives as two marker records, START (with the
// name and domain) and END, sharing an id, so START waits for its END; a sync record has
// no device, so the device of its context (from CONTEXT records) is used. Times are taken
// as CUPTI gives them: the backend has CUPTI stamp them on CLOCK_REALTIME ns, the file's
// clock. Only fields every record version of a kind shares at the same place are read.
//
// Built with the CUDA toolkit's headers only (no CUPTI call is made here).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include <cupti_activity.h>

#include "recorder/cupti_tracer/activity_backend.h"

namespace commlens::recorder::cupti {

class Translator {
 public:
  // The name of a runtime (|runtime|) or driver call by its callback id
  // (cuptiGetCallbackName in a real process).
  using ApiName = std::function<std::string(bool runtime, uint32_t cbid)>;
  explicit Translator(ApiName api_name) : api_name_(std::move(api_name)) {}

  // One record; kinds it does not translate are ignored. Returns whether it was one the
  // tracer keeps (counted by the caller).
  bool Translate(const CUpti_Activity* record, ActivitySink* sink);
  // Ranges still open (a START without its END yet).
  size_t open_ranges() const { return open_.size(); }

 private:
  struct Open {
    int64_t start;
    int32_t tid;
    std::string name, domain;
  };
  // A kernel's name as Kineto and Nsight show it (demangled: CUPTI gives the mangled one).
  const std::string& KernelName(const char* mangled);

  ApiName api_name_;
  std::unordered_map<const char*, std::string> names_;  // CUPTI's name pointer -> demangled
  std::unordered_map<uint64_t, Open> open_;             // marker id -> its START
  std::unordered_map<uint32_t, int32_t> device_of_;     // context id -> device
};

}  // namespace commlens::recorder::cupti
