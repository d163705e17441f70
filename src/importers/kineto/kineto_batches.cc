#include "importers/kineto/kineto_batches.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>

#include "model/collective.h"

namespace commlens::importers {

namespace {

// Whether a kernel whose name states |kernel_op| can run host op |op|: a SendRecv kernel
// runs sends and receives, a collective kernel runs its own collective.
bool Runs(model::CommOp kernel_op, model::CommOp op) {
  if (kernel_op == model::CommOp::kUnknown) return true;
  if (model::IsPointToPoint(kernel_op)) return model::IsPointToPoint(op);
  return kernel_op == op;
}

}  // namespace

void KinetoBatches::Attach(model::RankTrace* rank) {
  const bool undescribed = std::any_of(kernels_.begin(), kernels_.end(), [](const Kernel& k) { return !k.described; });
  if (host_ops_.empty() || !undescribed) return;
  // Each NCCL kernel's launch call: its thread and time.
  std::unordered_map<int64_t, uint32_t> by_correlation;
  for (uint32_t k = 0; k < kernels_.size(); ++k)
    if (kernels_[k].correlation != 0) by_correlation.emplace(kernels_[k].correlation, k);
  struct Launch {
    int64_t tid;
    model::TimeNs ts;
    uint32_t kernel;
  };
  std::vector<Launch> launches;
  const model::HostEvents& h = rank->host;
  for (uint32_t i = 0; i < h.size(); ++i) {
    if (h.correlation[i] == 0 || (h.kind[i] != model::HostKind::kRuntime && h.kind[i] != model::HostKind::kDriver))
      continue;
    auto it = by_correlation.find(h.correlation[i]);
    if (it == by_correlation.end()) continue;
    launches.push_back({h.tid[i], h.start[i], it->second});
    by_correlation.erase(it);  // a runtime call and the driver call inside it: the first seen
  }
  auto key = [](int64_t tid, model::TimeNs ts) { return std::make_tuple(tid, ts); };
  std::sort(launches.begin(), launches.end(),
            [&](const Launch& a, const Launch& b) { return key(a.tid, a.ts) < key(b.tid, b.ts); });
  std::stable_sort(host_ops_.begin(), host_ops_.end(),
                   [&](const HostCommOp& a, const HostCommOp& b) { return key(a.tid, a.ts) < key(b.tid, b.ts); });
  // Per thread, a launch takes the ops issued since the previous launch; a described
  // kernel's ops are its own (already in CommOps) and are passed over.
  model::GpuActivities& gpu = rank->gpu;
  size_t next = 0;
  for (const Launch& l : launches) {
    const size_t from = next;
    while (next < host_ops_.size() && key(host_ops_[next].tid, host_ops_[next].ts) < key(l.tid, l.ts)) ++next;
    size_t begin = from;
    while (begin < next && host_ops_[begin].tid != l.tid) ++begin;  // ops of threads that launched nothing
    const Kernel& k = kernels_[l.kernel];
    if (k.described || begin == next) continue;
    const model::CommOp kernel_op = model::CommOpFromNcclKernelName(rank->strings.Get(gpu.name[k.activity]));
    if (!std::all_of(host_ops_.begin() + begin, host_ops_.begin() + next,
                     [&](const HostCommOp& o) { return Runs(kernel_op, o.op); }))
      continue;  // not this kernel's ops: left to the classify pass's bare row
    const uint8_t flags = next - begin > 1 ? model::kCommBatched : 0;
    for (size_t j = begin; j < next; ++j) {
      const HostCommOp& o = host_ops_[j];
      const uint32_t row = rank->comms.Append(gpu.start[k.activity], gpu.end[k.activity], o.op, o.dtype, o.in_elems,
                                              o.out_elems, o.bytes, o.group, o.seq, o.peer, k.activity);
      rank->comms.flags[row] |= flags | (flags && j > begin ? model::kCommBatchNext : 0);
      if (j == begin) gpu.comm[k.activity] = row;
    }
  }
}

}  // namespace commlens::importers
