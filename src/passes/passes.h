// The individual finishing passes, in the order finish.cc runs them (see finish.h).
// Each is safe to run on a rank whose tables are empty.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/trace.h"

namespace commlens::passes {

void SortActivities(model::RankTrace* rank);
void Classify(model::RankTrace* rank);
void LinkLaunches(model::RankTrace* rank);
void NumberOps(model::RankTrace* rank);
void NestAnnotations(model::RankTrace* rank);
void FindSteps(model::RankTrace* rank);
// The iteration number of an NVTX range named like one ("step 3", "iteration_3"), used by
// FindSteps for traces without ProfilerStep#N.
bool IterationNumber(std::string_view name, int64_t* number);

void BuildJobGroups(model::Trace* trace);
void MatchOps(model::Trace* trace);
void AlignClocks(model::Trace* trace, model::AlignMode mode);
// Whether the job's matched collectives respect causality on its clocks as they are now
// (model::CausalityCheck).
model::CausalityCheck CheckCausality(const model::Trace& trace);
// The host in a PyTorch profiler file name (<host>_<pid>.<ms>.pt.trace.json[.gz], as
// torch.profiler.tensorboard_trace_handler writes it), or "".
std::string HostFromFileName(const std::string& path);
// Moves every time of |rank| by -|by| (a clock offset taken out).
void ShiftRankTimes(model::RankTrace* rank, model::TimeNs by);

}  // namespace commlens::passes
