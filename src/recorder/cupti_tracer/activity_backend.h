// Where the CUPTI tracer's activities come from: CUPTI's activity API in a real process
// (cupti_backend, built with the CUDA toolkit, next), a stand-in in tests. A backend
// hands each activity to the sink already in the native format's terms (format.h 1.4),
// its name as text; the sink numbers the strings and queues the records.
//
// Threading: a backend may call the sink from any thread (CUPTI calls its buffer-completed
// callback on a thread of its own), also concurrently with Flush; the sink locks.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "native_format/format.h"

namespace commlens::recorder::cupti {

class ActivitySink {
 public:
  virtual ~ActivitySink() = default;
  virtual void OnGpuActivity(const native_format::GpuActivityRecord& record, std::string_view name) = 0;
  virtual void OnCudaApi(const native_format::CudaApiRecord& record, std::string_view name) = 0;
  virtual void OnRange(const native_format::RangeRecord& record, std::string_view name, std::string_view domain) = 0;
  // Records the backend lost (CUPTI's buffers full), since the last call.
  virtual void OnDropped(uint64_t records) = 0;
};

enum class StartResult {
  kTracing,       // delivering
  kSteppedAside,  // another CUPTI client holds CUPTI (the PyTorch profiler, Nsight Systems)
  kFailed,        // CUPTI is missing or refused
};

class ActivityBackend {
 public:
  virtual ~ActivityBackend() = default;
  // Starts delivering activities to |sink|; unless tracing, |why| says why not.
  virtual StartResult Start(ActivitySink* sink, std::string* why) = 0;
  // Hands over the activities of completed buffers (CUPTI: a periodic flush).
  virtual void Flush() = 0;
  // Hands over every activity recorded so far, from buffers still being filled too (CUPTI:
  // a forced flush; it may cut a record being written, counted as dropped).
  virtual void FlushAll() { Flush(); }
  // Stops delivering; a last Flush first.
  virtual void Stop() = 0;
  // While paused (the recording switched off by its control file, or outside its capture
  // window) nothing new is recorded and tracing costs nothing (CUPTI: the kinds and calls
  // disabled); resuming records again. Only between Start and Stop.
  virtual void SetPaused(bool paused) = 0;
  // CUPTI's id of a CUDA stream (a cudaStream_t as a number), as the GPU activities on it
  // carry; false when it cannot tell (the stream is gone, or no CUPTI).
  virtual bool StreamId(uint64_t /*stream*/, uint32_t* /*id*/) { return false; }
  // Whether CUPTI is still ours: false, with who took it in |why|, once another client has
  // subscribed since Start (the PyTorch profiler or Nsight Systems started in the process).
  virtual bool Held(std::string* /*why*/) { return true; }
  // From now on, no call into CUPTI (another client owns its state): Flush, SetPaused and
  // Stop do nothing.
  virtual void LetGo() {}
};

}  // namespace commlens::recorder::cupti
