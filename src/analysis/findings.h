// The job's findings: its largest problems in plain words, the one number that matters
// in each, largest first ("rank 2 arrives last at 75% of its collectives ...").
//
// Each finding comes from one rule, a function over the analysis results that returns
// zero or more findings with an estimate of what they cost in wall time per step; the
// rules are one table in findings.cc. A new analysis adds its rule there, and the text
// report, the JSON and the HTML page show it without change.
//
// What a finding must satisfy before it is shown (docs/analysis.md, "Findings"): every
// cost says its unit (wall time per step, or rank-time summed over ranks); a finding that
// blames a rank needs the cross-rank evidence (the rank arrives last at those
// collectives); a cost below the steps' own variation names no rank; mixed causes are
// shown with their shares.
#pragma once

#include <string>
#include <vector>

#include "model/trace.h"

namespace commlens::analysis {

struct JobAnalysis;

struct Finding {
  std::string rule;     // the rule that found it ("straggler", "hang", ...)
  std::string text;     // one or two sentences, plain words, units included
  std::string section;  // the report section that shows the evidence ("collectives", ...)
  // Estimated wall time lost per step (over the trace without steps); orders the list.
  double cost_ns_per_step = 0;
  bool first = false;  // listed before every costed finding (a hang: the job stops, no cost per step)
};

// Every rule's findings: the ones listed first, then the largest cost first.
std::vector<Finding> FindFindings(const model::Trace& trace, const JobAnalysis& job);

}  // namespace commlens::analysis
