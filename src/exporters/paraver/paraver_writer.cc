#include "exporters/paraver/paraver_writer.h"

#include <unistd.h>

#include <ctime>
#include <functional>
#include <memory>
#include <queue>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "common/output_file.h"
#include "exporters/paraver/comm_records.h"
#include "exporters/paraver/paraver_layout.h"
#include "exporters/paraver/pcf_row.h"
#include "exporters/paraver/thread_timeline.h"

namespace commlens::exporters {

namespace {

using paraver::CommRecord;
using paraver::Layout;
using paraver::ThreadTimeline;

// The header's date: when the job's first kept event happened (UTC), so the same trace
// always gives the same file; times before 2000 are not on the Unix epoch (a clock that
// starts at boot) and give the epoch's date.
std::string HeaderDate(model::TimeNs origin) {
  constexpr model::TimeNs kYear2000 = 946684800LL * 1000000000LL;
  std::time_t seconds = origin >= kYear2000 ? static_cast<std::time_t>(origin / 1000000000LL) : 0;
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%d/%m/%Y at %H:%M", &tm);
  return text;
}

std::string Header(const model::Trace& trace, const Layout& layout) {
  std::string h = fmt::format("#Paraver ({}):{}_ns:0:1:{}(", HeaderDate(layout.origin()), layout.end(), trace.ranks.size());
  for (size_t r = 0; r < trace.ranks.size(); ++r)
    h += fmt::format("{}{}:1", r ? "," : "", layout.first_thread(r + 1) - layout.first_thread(r));
  return h + ")\n";
}

// Merges the threads' cursors and the communication records by (time, record type,
// thread) and streams the lines out. Global thread order is (task, thread) order.
void WriteRecords(const model::Trace& trace, const Layout& layout, OutputFile* out) {
  std::vector<ThreadTimeline> timelines;
  timelines.reserve(layout.threads().size());
  for (const paraver::Thread& t : layout.threads()) timelines.emplace_back(trace.ranks[t.rank_index], t, layout);
  const std::vector<CommRecord> comms = paraver::BuildCommRecords(trace, layout);

  // (time, record type, thread, source): source < timelines.size() is a timeline, else
  // the communication record source - timelines.size().
  using Key = std::tuple<model::TimeNs, int, uint32_t, size_t>;
  std::priority_queue<Key, std::vector<Key>, std::greater<Key>> heap;
  for (size_t i = 0; i < timelines.size(); ++i)
    if (!timelines[i].done()) heap.emplace(timelines[i].time(), timelines[i].record_type(), static_cast<uint32_t>(i), i);
  if (!comms.empty()) heap.emplace(comms[0].send, 3, comms[0].from, timelines.size());

  fmt::memory_buffer buffer;
  constexpr size_t kFlushAt = 1 << 16;
  while (!heap.empty()) {
    const auto [time, type, thread, source] = heap.top();
    heap.pop();
    if (source < timelines.size()) {
      ThreadTimeline& t = timelines[source];
      t.Emit(&buffer);
      if (!t.done()) heap.emplace(t.time(), t.record_type(), thread, source);
    } else {
      const size_t c = source - timelines.size();
      paraver::AppendCommLine(comms[c], layout, &buffer);
      if (c + 1 < comms.size()) heap.emplace(comms[c + 1].send, 3, comms[c + 1].from, source + 1);
    }
    if (buffer.size() >= kFlushAt) {
      out->Write({buffer.data(), buffer.size()});
      buffer.clear();
    }
  }
  out->Write({buffer.data(), buffer.size()});
}

}  // namespace

// |job| is not read: Paraver computes its views (share/paraver/*.cfg) from the records.
Status WriteParaver(const model::Trace& trace, const analysis::JobAnalysis& /*job*/,
                    const std::string& out_prefix, const ExportOptions& options) {
  if (trace.ranks.empty()) return Error(out_prefix + ".prv: no ranks to export");
  const std::string paths[] = {out_prefix + ".prv", out_prefix + ".pcf", out_prefix + ".row"};
  std::unique_ptr<OutputFile> files[3];
  for (int i = 0; i < 3; ++i) {
    COMMLENS_ASSIGN_OR_RETURN(files[i], OutputFile::Create(paths[i]));
  }

  const Selection selection(trace, options);
  const Layout layout(trace, selection);
  files[0]->Write(Header(trace, layout));
  WriteRecords(trace, layout, files[0].get());
  paraver::WritePcf(trace, layout, files[1].get());
  paraver::WriteRow(trace, layout, files[2].get());

  // The .prv (the one a full disk is likely to stop) first; a later failure removes the
  // files already committed, so no partial set is left.
  for (int i = 0; i < 3; ++i) {
    Status s = files[i]->Commit();
    if (s.ok()) continue;
    for (int j = 0; j < i; ++j) ::unlink(paths[j].c_str());
    return s;
  }
  return OkStatus();
}

}  // namespace commlens::exporters
