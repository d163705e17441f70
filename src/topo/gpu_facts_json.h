// GPU facts read back from a `commlens topo --json` document, so that a sysfs snapshot of
// another machine (scripts/device/topo.sh takes one) can be rendered here with that
// machine's NVLink and P2P facts: `commlens topo --sysfs-root SNAPSHOT --gpu-facts JSON`.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "topo/gpu_probe.h"

namespace commlens::topo {

// The GPU facts of a topology document (schema_version 1); an error names what is wrong.
Result<GpuProbeResult> GpuFactsFromJson(const nlohmann::json& doc);

// A probe that answers with facts read earlier.
class RecordedGpuProbe : public GpuProbe {
 public:
  explicit RecordedGpuProbe(GpuProbeResult facts) : facts_(std::move(facts)) {}
  GpuProbeResult Probe(const std::vector<std::string>&) override { return facts_; }

 private:
  GpuProbeResult facts_;
};

}  // namespace commlens::topo
