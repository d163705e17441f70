// The CUPTI tracer's backend in a real process: CUPTI's activity API, loaded at run time
// (dlopen: the recorder links nothing of CUDA, and a job without CUPTI still records its
// NCCL operations), its records translated (cupti_translate.h) for the tracer's sink.
//
// Start: loads libcupti (|library|, else libcupti.so.13 then libcupti.so from the loader's
// path); probes for another CUPTI client by subscribing and at once unsubscribing (CUDA
// 13's CUPTI serves one subscriber: the PyTorch profiler and Nsight Systems hold it; the
// probe returns its name) and steps aside if one is there; has CUPTI stamp records on
// CLOCK_REALTIME (the file's clock; refused otherwise) and name threads by their kernel
// ids; registers its buffers; enables kernels (required), copies, peer copies, sets, syncs
// and NVTX markers (optional each; the NVTX ones arrive only when NVTX is injected: to
// do), dumps the contexts that exist (a late attach), and traces only the CUDA calls that
// launch, copy, set or wait, by callback id. Buffers are 8 MiB, allocated on CUPTI's
// request (on the application's thread, inside a CUDA call: no lock taken there), tagged
// past their end so that one of another client's is neither read nor freed, and freed
// once translated. A periodic Flush hands over completed buffers only; Stop disables
// what it enabled, then forces out the rest.
//
// Threading: CUPTI calls the completed callback on its own thread, or on the thread in
// Flush; translation is serialized by |mu_|. CUPTI's callbacks carry no user data, so one
// backend per process is current (Start fails for a second).
#pragma once

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "recorder/cupti_tracer/activity_backend.h"
#include "recorder/cupti_tracer/cupti_kinds.h"
#include "recorder/cupti_tracer/cupti_translate.h"

namespace commlens::recorder::cupti {

class CuptiBackend final : public ActivityBackend {
 public:
  static constexpr size_t kBufferBytes = 8u << 20;

  explicit CuptiBackend(std::string library = "", uint32_t kinds = kDefaultCuptiKinds);
  ~CuptiBackend() override;

  StartResult Start(ActivitySink* sink, std::string* why) override;
  void Flush() override;
  void FlushAll() override;
  void Stop() override;
  void SetPaused(bool paused) override;
  bool StreamId(uint64_t stream, uint32_t* id) override;
  bool Held(std::string* why) override;
  void LetGo() override { started_ = false; }

 private:
  struct Api;
  static void CUPTIAPI OnBufferRequested(uint8_t** buffer, size_t* size, size_t* max_records);
  static void CUPTIAPI OnBufferCompleted(CUcontext context, uint32_t stream, uint8_t* buffer, size_t size, size_t valid);
  void Completed(uint8_t* buffer, size_t valid);
  std::string ResultText(CUptiResult r) const;
  void EnableOurs();  // what Start chose (|wanted_|), into |enabled_|
  void DisableOurs();
  void TraceCalls(uint8_t on);  // the launch, copy, set and wait calls, by callback id
  void FlushBuffers(bool forced);

  std::string library_;
  uint32_t kinds_;  // CuptiKind bits asked for
  void* handle_ = nullptr;
  Api* api_ = nullptr;
  ActivitySink* sink_ = nullptr;
  bool started_ = false;
  CUptiResult Probe(std::string* holder);  // whether another client holds CUPTI (cupti_backend.cc)
  std::vector<CUpti_ActivityKind> wanted_;                // the kinds CUPTI took at Start (kernels first)
  std::vector<CUpti_ActivityKind> enabled_;               // those enabled now (none while paused)
  std::unordered_map<uint64_t, std::string> api_names_;  // (runtime << 32 | cbid) -> name, from Start
  std::mutex mu_;  // translation
  Translator translator_;
};

}  // namespace commlens::recorder::cupti
