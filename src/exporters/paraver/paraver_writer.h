// Paraver export: the job as one Paraver application for BSC's Paraver (and paramedir),
// with the views under share/paraver/*.cfg.
//
//   OUT.prv  header "#Paraver (<date>):<end>_ns:0:1:<ranks>(<threads>:1,...)" (no resource
//            model, one application, task k = rank Trace::ranks[k-1], its threads = its GPU
//            streams; paraver_layout.h), then the records sorted by (time, record type,
//            task, thread):
//              1 states: idle / compute / communication / memory / other on each stream
//                (thread_timeline.h: how the timeline is built, the overlap rule)
//              2 events: activity name, collective op, bytes, process group, sequence number
//              3 communications: p2p messages and who waited for whom in each collective
//                (comm_records.h)
//            Times are ns from the job's earliest kept timestamp.
//   OUT.pcf  states, event types and value tables (paraver_ids.h has the numbers)
//   OUT.row  "rank N (host)" per task, "rank N GPU d stream s" per thread
//
// GPU side only: the host side (CPU ops, runtime calls, annotations) is not exported, so
// ExportOptions::all_events has no effect here; ExportOptions::steps keeps the GPU
// activities launched in those steps (export.h). The .prv is streamed: one cursor per
// thread merged by time, memory proportional to the model, not to the output.
//
// The three files appear together or not at all: on any failure none is left, and the
// Status names the path that failed.
#pragma once

#include <string>

#include "analysis/analyze.h"
#include "common/status.h"
#include "exporters/export.h"
#include "model/trace.h"

namespace commlens::exporters {

// Writes OUT.prv, OUT.pcf and OUT.row for the whole job (|out_prefix| = OUT).
Status WriteParaver(const model::Trace& trace, const analysis::JobAnalysis& job,
                    const std::string& out_prefix, const ExportOptions& options);

}  // namespace commlens::exporters
