// Classifies every unclassified GPU activity (model/activity_class.h) and gives each
// communication kernel that has no CommOps row one, with the op its name states: sources
// that describe a collective (PyTorch's collective args, NCCL's NVTX payloads) have
// already appended its row; a bare NCCL kernel still counts as communication. Not in a
// commlens recording: its ops are NCCL's own (the plugin's), and a kernel the CUPTI
// tracer saw but could not tie to one is the same op, not a second one.
#include <vector>

#include "model/activity_class.h"
#include "passes/passes.h"

namespace commlens::passes {

using model::ActivityClass;
using model::ActivityKind;

void Classify(model::RankTrace* rank) {
  model::GpuActivities& g = rank->gpu;
  // Kernels classify once per distinct name (a trace has thousands of launches of a
  // few hundred kernels); copies and sets by their kind.
  constexpr auto kUnknown = static_cast<uint8_t>(ActivityClass::kUnclassified);
  std::vector<uint8_t> kernel_class(rank->strings.size(), kUnknown);
  for (uint32_t i = 0; i < g.size(); ++i) {
    if (g.cls[i] != ActivityClass::kUnclassified) continue;
    if (g.kind[i] != ActivityKind::kKernel) {
      g.cls[i] = model::ClassifyActivity(rank->strings.Get(g.name[i]), g.kind[i]);
      continue;
    }
    uint8_t& cached = kernel_class[g.name[i].value];
    if (cached == kUnknown)
      cached = static_cast<uint8_t>(model::ClassifyActivity(rank->strings.Get(g.name[i]), g.kind[i]));
    g.cls[i] = static_cast<ActivityClass>(cached);
  }
  if (rank->format == "native") return;
  for (uint32_t i = 0; i < g.size(); ++i) {
    if (g.cls[i] != ActivityClass::kCommunication || g.comm[i] != model::kNoIndex) continue;
    model::CommOp op = model::CommOpFromNcclKernelName(rank->strings.Get(g.name[i]));
    g.comm[i] = rank->comms.Append(g.start[i], g.end[i], op, model::StringId{}, -1, -1, -1,
                                   model::kNoIndex, -1, -1, i);
  }
}

}  // namespace commlens::passes
