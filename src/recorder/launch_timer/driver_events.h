// GpuEvents through CUDA's driver library (libcuda.so.1), found in the process that loaded
// it (NCCL did, before its profiler plugin) and else opened: the recorder's plugin links no
// CUDA, so one build serves every CUDA version. Only documented driver calls of CUDA 11 and
// later are used; their few types are declared here as the driver's header lays them out.
#pragma once

#include <string>

#include "recorder/launch_timer/gpu_events.h"

namespace commlens::recorder::launch_timer {

class DriverEvents final : public GpuEvents {
 public:
  // |library|: the driver library's path; "" for the process's libcuda.so.1.
  explicit DriverEvents(std::string library = "") : library_(std::move(library)) {}
  ~DriverEvents() override;  // the library stays loaded: the job uses it

  bool Load(std::string* why) override;
  Handle StreamContext(uint64_t stream) override;
  bool Capturing(uint64_t stream) override;
  Handle NewEvent(Handle context) override;
  Handle NewStream(Handle context) override;
  void DestroyEvent(Handle event) override;
  void DestroyStream(Handle stream) override;
  bool Record(Handle event, uint64_t stream) override;
  Done Query(Handle event) override;
  bool ElapsedNs(Handle from, Handle to, int64_t* ns) override;
  int RelaxCapture() override;
  void RestoreCapture(int mode) override;

 private:
  struct Api;
  template <typename Make>
  Handle MakeIn(Handle context, Make make);
  std::string library_;
  Api* api_ = nullptr;
};

}  // namespace commlens::recorder::launch_timer
