// Two runs of a job side by side (`commlens diff A B`, docs/analysis.md "Diff"): per step
// the step time, its breakdown, every collective bucket's time and transfer bandwidth, the
// kernels, the ranks' waiting for each other, and the what-if S; each as A's mean over the
// steps its summary covers, B's, the change, and a bootstrap interval of the change over
// the two runs' steps. A change is beyond noise when that interval leaves out zero and it
// is at least |min_change| of A's value: the runs' own step-to-step spread could not make
// it, and it is large enough to act on.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/analyze.h"
#include "analysis/resample.h"
#include "model/trace.h"

namespace commlens::analysis {

enum class DiffUnit { kTime, kBandwidth, kRatio };

struct DiffRow {
  std::string section;  // "step", "breakdown", "collective", "kernel", "rank", "whatif"
  std::string name;     // what is compared, the key the runs match by ("all_reduce 32 MiB-64 MiB in ranks 0-3: busbw")
  std::string shown;    // how reports name it: |name| with a bucket's group described ("... in ranks 0-3 (default_pg): busbw")
  DiffUnit unit = DiffUnit::kTime;  // kTime in ns per step (mean rank), kBandwidth in GB/s
  bool in_a = false, in_b = false;  // the run has it at all
  // Its value is known: it has it, or it measures its kind and so ran none (0). A
  // recording's kernels are unknown, not zero.
  bool known_a = false, known_b = false;
  size_t steps_a = 0, steps_b = 0;  // steps with a value
  double a = 0, b = 0;              // means over those steps (0 where the run lacks it)
  double change = 0;                // b - a
  double relative = 0;              // change / a; 0 when a is 0
  std::optional<Interval> interval; // of the change, over steps (none: too few steps)
  bool beyond_noise = false;
  // What the change costs per step in time (ns, + slower): the change itself for a time;
  // for a bucket's bandwidth, the change of its transfer time per step (mean rank).
  double step_cost = 0;
};

struct DiffRun {
  size_t ranks = 0;
  size_t steps = 0;               // samples: the steps the summary covers, or slices
  bool over_steps = false;        // false: a trace without profiler steps, cut into equal slices
  std::string straggler;          // the verdict's part to fix first, or the top straggler; "" for none
  double straggler_gain = 0;      // its predicted gain (replay), 0 when from lateness
  std::vector<double> step_times; // ns, per summarized step
  std::string formats;            // its ranks' formats ("kineto", "native, kineto")
};

struct RunDiff {
  DiffRun a, b;
  std::vector<std::string> warnings;  // what makes the two runs compare less well (rank counts, formats)
  std::vector<DiffRow> rows;  // by section (step, breakdown, collective, kernel, rank, whatif), largest change first within
  // The rows beyond noise, largest |step_cost| first, then the others by |relative|.
  std::vector<const DiffRow*> Changes() const;
};

struct DiffOptions {
  double min_change = 0.02;  // beyond noise also needs |change| >= this x |A|
  double level = 0.95;       // of the bootstrap interval
  size_t kernels = 15;       // kernels compared: the longest in either run
  size_t ranks = 64;         // ranks compared: those whose waiting changed most
  size_t slices = 16;        // runs without profiler steps: the shorter cut into this many slices
};

struct DiffSide {
  const model::Trace* trace = nullptr;
  const JobAnalysis* job = nullptr;  // its replay's S per step is compared when it ran
};

RunDiff DiffRuns(const DiffSide& a, const DiffSide& b, const DiffOptions& options = {});

}  // namespace commlens::analysis
