// Batched communication in Kineto traces (../shared/reference/traces.md §3.3a): a
// `dist.batch_isend_irecv` (Megatron-LM's, NeMo's and torchtitan's pipelines) or a
// coalesced group of collectives runs as one NCCL kernel whose args carry no collective
// fields; its ops are the host `record_param_comms` operators issued on the launching
// thread since that thread's previous NCCL launch. This gives each such kernel its ops:
// one CommOps row per op with the kernel's times, its size, peer, direction and group,
// flagged model::kCommBatched when the kernel ran several.
#pragma once

#include <cstdint>
#include <vector>

#include "model/trace.h"

namespace commlens::importers {

// One `record_param_comms` operator as the table writer decoded it.
struct HostCommOp {
  model::TimeNs ts;
  int64_t tid;
  model::CommOp op;
  model::StringId dtype;
  int64_t in_elems, out_elems, bytes;
  uint32_t group;  // in RankTrace::groups, kNoIndex when unknown
  int64_t seq;     // -1 for p2p (numbered per pair by the number_ops pass)
  int32_t peer;
};

class KinetoBatches {
 public:
  void AddHostOp(const HostCommOp& op) { host_ops_.push_back(op); }
  // An NCCL kernel, |described| when its own args named its collective.
  void AddNcclKernel(uint32_t activity, int64_t correlation, bool described) {
    kernels_.push_back({activity, correlation, described});
  }
  // Appends the rows of the kernels that had no description. Call once every event is in
  // (times still as the file wrote them: the launches are matched on one clock).
  void Attach(model::RankTrace* rank);

 private:
  struct Kernel {
    uint32_t activity;
    int64_t correlation;
    bool described;
  };
  std::vector<HostCommOp> host_ops_;
  std::vector<Kernel> kernels_;
};

}  // namespace commlens::importers
