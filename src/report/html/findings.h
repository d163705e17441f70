// The report's findings: the largest problems of the job in plain words, largest first
// ("rank 3 arrives last at 71% of collectives; the other ranks wait for the last rank
// 4.2 ms per step").
//
// Each finding comes from one rule, a function over the analysis results that returns
// zero or more findings with an estimate of what they cost per step; the rules are one
// table in findings.cc. A new analysis adds its rule there, and the page shows it without
// change. Cross-rank rules read JobAnalysis::cross_rank: stragglers and why, hangs and
// desyncs, process-group contention, the pipeline bubble, and the clock alignment.
#pragma once

#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "model/trace.h"
#include "report/html/html_report.h"

namespace commlens::report::html {

struct Finding {
  std::string rule;     // the rule that found it ("last_arrival", ...)
  std::string text;     // one sentence, plain words, units included
  std::string section;  // the page section that shows the evidence ("collectives", ...)
  double cost_ns_per_step = 0;  // estimated time lost per step; orders the list
  bool first = false;  // listed before every costed finding (a hang: the job stops, no cost per step)
};

struct FindingsInput {
  const model::Trace& trace;
  const analysis::JobAnalysis& job;
  const std::vector<BenchCurve>& bench;
};

// Every rule's findings, largest cost first.
std::vector<Finding> FindFindings(const FindingsInput& in);

// Interpolated busbw of |curve| at |bytes| (log-size linear), or 0 outside its sizes.
double BenchBusBwAt(const BenchCurve& curve, double bytes);

}  // namespace commlens::report::html
