// The CUPTI tracer's backend in a real process: CUPTI's activity API, loaded at run time
// (dlopen: the recorder links nothing of CUDA, and a job without CUPTI still records its
// NCCL operations), its records translated (cupti_translate.h) for the tracer's sink.
//
// Start: loads libcupti (|library|, else libcupti.so.13 then libcupti.so from the loader's
// path); probes for another CUPTI client by subscribing and at once unsubscribing (CUDA
// 13's CUPTI serves one subscriber: the PyTorch profiler and Nsight Systems hold it; the
// probe returns its name) and steps aside if one is there; has CUPTI stamp records on
// CLOCK_REALTIME (the file's clock) and name threads by their kernel ids; registers its
// buffers; enables kernels, copies (peer too), sets, syncs, contexts, runtime and driver
// calls and NVTX markers (the NVTX ones arrive only when NVTX is injected: to do).
// Buffers are 8 MiB, allocated on CUPTI's request (on the application's thread, inside a
// CUDA call: no lock taken there) and freed once translated.
//
// Threading: CUPTI calls the completed callback on its own thread, or on the thread in
// Flush; translation is serialized by |mu_|. CUPTI's callbacks carry no user data, so one
// backend per process is current (Start fails for a second).
#pragma once

#include <mutex>
#include <string>

#include "recorder/cupti_tracer/activity_backend.h"
#include "recorder/cupti_tracer/cupti_translate.h"

namespace commlens::recorder::cupti {

class CuptiBackend final : public ActivityBackend {
 public:
  static constexpr size_t kBufferBytes = 8u << 20;

  explicit CuptiBackend(std::string library = "");
  ~CuptiBackend() override;

  StartResult Start(ActivitySink* sink, std::string* why) override;
  void Flush() override;
  void Stop() override;

 private:
  struct Api;
  static void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI OnBufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid);
  void Completed(uint8_t* buffer, size_t valid);
  std::string ResultText(CUptiResult r) const;
  void DisableAll();

  std::string library_;
  void* handle_ = nullptr;
  Api* api_ = nullptr;
  ActivitySink* sink_ = nullptr;
  bool started_ = false;
  std::mutex mu_;  // translation
  Translator translator_;
};

}  // namespace commlens::recorder::cupti
