// The timeline of one profiler step on every rank, aggregated for drawing.
//
// For each rank a summary row of what the GPU as a whole was doing (compute; exposed
// communication, with no compute beside it; memory or sync only; idle = not drawn), and,
// when there are not too many, one row per GPU stream with the merged intervals of each
// class (compute, communication, memory, other). Activities belong to the step whose
// CPU range holds their launch (the analysis window's step_of). A rank without GPU
// activities (a commlens recording) shows its communication ops instead.
//
// Never a rectangle per kernel: each row gets an equal share of |budget| rectangles, and
// a row with more intervals than its share has its shortest same-class gaps filled until
// it fits. |merged_gap| is the longest gap filled anywhere, so the page can say how
// coarse the picture is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "model/trace.h"

namespace commlens::report::html {

// What a rectangle shows. Stream rows use compute..other; summary rows use compute,
// exposed communication and memory (memory, copies, sets or sync only).
enum class TimelineState : uint8_t { kCompute, kComm, kMemory, kOther, kExposedComm };

struct TimelineRow {
  int rank = 0;
  int device = -1;   // -1 on summary rows
  int stream = -1;   // -1 on summary rows
  std::vector<model::TimeNs> start;  // relative to StepTimeline::t0
  std::vector<model::TimeNs> end;
  std::vector<TimelineState> state;
};

struct StepTimeline {
  int64_t step = -1;           // ProfilerStep number; -1: the whole analyzed window
  model::TimeNs t0 = 0;        // earliest activity of the step on any rank (ns, trace clock)
  model::TimeNs length = 0;    // latest end - t0
  bool per_stream = false;     // stream rows present
  model::TimeNs merged_gap = 0;
  size_t rectangles = 0;
  std::vector<TimelineRow> rows;  // per rank: summary row, then its streams
};

// Step |step| (-1: the job's typical step, JobAnalysis::median_span_step, or the whole
// window without steps).
StepTimeline BuildStepTimeline(const model::Trace& trace, const analysis::JobAnalysis& job,
                               int64_t step, size_t budget);

// Fills the shortest gaps between same-state intervals until at most |cap| remain; the
// longest gap filled, or 0. |row| holds merged lists per state, sorted by start.
model::TimeNs CoarsenRow(TimelineRow* row, size_t cap);

}  // namespace commlens::report::html
