// NewCuptiBackend in a build without CUPTI's headers: a backend that does not start.
#include "recorder/cupti_tracer/backend_factory.h"

namespace commlens::recorder::cupti {

namespace {

class WithoutCupti final : public ActivityBackend {
 public:
  StartResult Start(ActivitySink*, std::string* why) override {
    *why = "this commlens was built without CUPTI's headers (the CUDA toolkit)";
    return StartResult::kFailed;
  }
  void Flush() override {}
  void Stop() override {}
  void SetPaused(bool) override {}
};

}  // namespace

ActivityBackend* NewCuptiBackend(const std::string&, uint32_t) { return new WithoutCupti(); }

}  // namespace commlens::recorder::cupti
