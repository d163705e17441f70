// What-if replay of a job (docs/analysis.md, "What if"): each profiler step rebuilt as a
// graph of its GPU activities and replayed, first with the measured durations (the
// model's own accuracy: it must give back the measured step times), then with every
// activity at the typical duration of its kind (the ideal), then with one part of the
// job left at its measured durations or set to the typical ones (attribution and
// what-ifs). The method follows the published what-if analysis of stragglers (ByteDance,
// OSDI '25; ../shared/reference/whatif.md), written on commlens's trace model:
//
// - Nodes: a rank's GPU activities in the step (one per kernel: a batch's ops share it).
// - Edges on a rank: each activity waits for the one before it on its stream; one that
//   starts within kCrossStream of another stream's activity ending, later than its own
//   stream let it, waits for that activity (an event wait the trace does not record).
//   The rest of the gap before it is its launch delay (the host's, or what the model
//   does not see).
// - Edges across ranks: a matched collective's or message's members end only after
//   every member started; each ends at the latest member start plus its own transfer
//   time (its measured end minus that start).
// - Not modelled: contention (durations do not depend on what runs beside them: memory
//   bandwidth and links shared between streams), host threads (launch delays are fixed
//   or zero), dependencies that left no trace (an event wait that ended long before).
//
// Frames: measured (durations, transfers and launch delays as recorded: reproduces the
// step times), no-delay (launch delays 0: the GPU side alone), ideal (no delays; each
// compute or memory activity at the mean duration of its name over every rank and step,
// each communication at the median transfer of its name). S = no-delay step time / ideal
// step time, both the mean over steps; a part's S is the ideal with that part's
// activities back at their measured values, over the ideal.
#pragma once

#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "model/trace.h"

namespace commlens::analysis {

// One part of the job: "rank=R", "stage=S" (a pipeline stage, every replica), "op=NAME"
// (activities whose name starts with NAME), "group=G" (the communication of a process
// group, by name or description).
struct WhatIfPart {
  std::string kind;   // rank, stage, op, group
  std::string value;
  std::string Label() const { return kind + "=" + value; }
};

struct WhatIfShare {
  std::string label;             // "rank 3", "op nvjet_...", "stage 0", "group 1:dp"
  WhatIfPart part;
  double slowdown = 0;           // the ideal with this part measured, over the ideal
  std::vector<double> per_step;  // the same per step
};

// A part at its typical speed: its activities at their kind's ideal, and those of a kind
// no other rank runs in the step (its extra work) left out.
struct WhatIfFix {
  WhatIfPart part;
  std::vector<model::TimeNs> step_time;  // predicted per step, launch delays as measured
  std::vector<model::TimeNs> no_delay;   // the same without launch delays
  model::TimeNs mean = 0;                // of step_time
  double gain = 0;  // 1 - predicted / replayed, means over steps
  // The network fix: communication activities the benchmark priced (its op and group size
  // measured, a size known), and those left as measured.
  uint64_t priced = 0, unpriced = 0;
};

struct WhatIfAnalysis {
  bool done = false;
  std::string why_not;  // when not done
  std::vector<int64_t> steps;  // profiler step numbers replayed (-1: a trace without steps, whole)
  std::vector<model::TimeNs> measured, replayed, no_delay, ideal;  // step times
  double replay_error = 0;     // the largest |replayed - measured| / measured over steps
  double slowdown = 0;         // S
  double launch_slowdown = 0;  // measured / no-delay
  std::vector<double> step_slowdown;  // S per step
  uint64_t nodes = 0, groups = 0, cross_stream_edges = 0, unresolved = 0;
  std::vector<WhatIfShare> by_rank, by_stage, by_op, by_group;  // largest first
  std::vector<WhatIfFix> fixes;
  // With WhatIfOptions::timeline: every replayed activity in the ideal frame, each step
  // starting where it started in the trace.
  struct Placed {
    uint32_t rank;  // index in Trace::ranks
    uint32_t row;   // its GPU activity
    model::TimeNs start, end;
    int64_t step;   // the profiler step it was replayed in (-1: a trace without steps)
  };
  std::vector<Placed> ideal_timeline;
};

struct WhatIfOptions {
  std::vector<WhatIfPart> fixes;
  size_t top_ops = 12;  // op kinds attributed (by their measured time)
  // Also predict the fix of the |fix_top| parts with the largest S among the ranks, and of
  // the top stage and op kind (when their S is over kAttributed).
  size_t fix_top = 0;
  // Ranks attributed: 0 all; else the ones whose activities exceed their kinds' ideal the
  // most (summed over steps), a replay each: analyze's verdict on a large job replays a few.
  size_t rank_candidates = 0;
  bool attribute_groups = true;
  bool timeline = false;  // fill WhatIfAnalysis::ideal_timeline
  // The network at the speed `commlens bench` measured (--network RUN.json): one more fix,
  // part {"network", network_label}.
  std::vector<BenchCurve> network;
  std::string network_label;
};

// The ideal replay's timeline as a trace of its own (commlens whatif --perfetto): per rank
// (its host named "ideal replay"), each replayed GPU activity at its ideal start and end
// on its stream, and the replayed profiler steps, each from its measured start to its
// ideal end. Host events, communication ops and counters are not replayed: left out.
model::Trace IdealTimeline(const model::Trace& trace, const WhatIfAnalysis& w);

// The mean of step times (0 for none).
double MeanStep(const std::vector<model::TimeNs>& steps);

// The replay's verdict for analyze: WhatIf with the top parts fixed.
ReplayVerdict ReplayVerdictOf(const model::Trace& trace, const JobAnalysis& job);

WhatIfAnalysis WhatIf(const model::Trace& trace, const JobAnalysis& job, const WhatIfOptions& options);

}  // namespace commlens::analysis
