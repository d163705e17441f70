#include "passes/finish.h"

#include "passes/passes.h"

namespace commlens::passes {

void FinishRank(model::RankTrace* rank) {
  SortActivities(rank);
  Classify(rank);
  LinkLaunches(rank);
  NumberOps(rank);
  NestAnnotations(rank);
  FindSteps(rank);
}

void FinishJob(model::Trace* trace, const JobOptions& options) {
  BuildJobGroups(trace);
  MatchOps(trace);
  AlignClocks(trace, options.align);
}

}  // namespace commlens::passes
