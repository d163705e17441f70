// libFuzzer target: arbitrary bytes through the Kineto reader (gzip detection, JSON
// parse, table writer, finishing passes) and, when they import, through every analysis and both reports.
// The same bytes also go through the streaming reader, from an in-memory file and with a
// small window (so that window boundaries fall everywhere): when both readers accept
// them, the tables they write must be the same. A third pass reads them as analyze does
// (host events left out as they are read), which must keep the same GPU side, launches,
// steps and host counts.
// Any crash, sanitizer report or hang is a bug: bad input must end in a Status or in
// counted bad events.
#include <sys/mman.h>
#include <unistd.h>

#include <simdjson.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analyze.h"
#include "common/utf8.h"
#include "importers/common/input_file.h"
#include "importers/kineto/kineto_importer.h"
#include "passes/finish.h"
#include "report/json_report.h"
#include "report/text_report.h"

// The streaming import of |data| through a memfd (the reader takes a path), or nothing
// when no memfd can be made.
std::optional<commlens::Result<commlens::model::RankTrace>> Stream(const uint8_t* data, size_t size, size_t window,
                                                                   bool drop_host_events = false) {
  int fd = memfd_create("kineto_fuzz", 0);
  if (fd < 0) return std::nullopt;
  if (size > 0 && write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return std::nullopt;
  }
  auto r = commlens::importers::StreamKinetoTrace("/proc/self/fd/" + std::to_string(fd), {.window_bytes = window, .drop_host_events = drop_host_events});
  close(fd);
  return r;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace commlens;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto file = importers::DecodeInput(bytes, "fuzz.json");
  if (!file.ok()) return 0;
  auto rank = importers::ImportKinetoTrace(file->buffer, "fuzz.json");
  auto streamed = Stream(data, size, 64 + size % 97);
  // On valid JSON the two readers must build the same tables. On invalid JSON they may
  // differ: the whole-document reader can stop at a garbled metadata value that the
  // streaming reader, which cuts each top-level value out, reads past. Both read bytes that
  // are not UTF-8 as U+FFFD (kineto_utf8.h): valid JSON once repaired counts, and then
  // both must also count the same bad bytes at the same offsets.
  simdjson::dom::parser validator;
  const Utf8Repair repaired(file->buffer.view(), simdjson::SIMDJSON_PADDING);
  const bool valid =
      validator.parse(repaired.text().data(), repaired.text().size(), false).error() == simdjson::SUCCESS;
  if (valid && rank.ok() && streamed && streamed->ok()) {
    const model::RankTrace& a = *rank;
    const model::RankTrace& b = **streamed;
    auto utf8_offsets = [](const model::RankTrace& r) {
      std::vector<uint64_t> at;
      for (const auto& e : r.stats.examples(model::ImportIssue::kInvalidUtf8)) at.push_back(e.offset);
      return at;
    };
    bool same = a.gpu.start == b.gpu.start && a.gpu.end == b.gpu.end && a.host.start == b.host.start &&
                a.host.end == b.host.end && a.annotations.start == b.annotations.start &&
                a.flows.id == b.flows.id && a.comms.bytes == b.comms.bytes && a.rank == b.rank &&
                a.strings.size() == b.strings.size() && a.stats.total() == b.stats.total() &&
                a.stats.count(model::ImportIssue::kInvalidUtf8) == b.stats.count(model::ImportIssue::kInvalidUtf8) &&
                utf8_offsets(a) == utf8_offsets(b) && a.input_bytes == b.input_bytes;
    if (!same) std::abort();  // the streaming reader disagrees with the whole-document one
  }
  // analyze's import (host events left out as they are read) against the whole one with
  // the drop after the passes (model/host_events.h): the same GPU side, launches, steps,
  // counts and end of the host side.
  auto lean = Stream(data, size, 64 + size % 89, true);
  if (streamed && streamed->ok() && lean && lean->ok()) {
    model::RankTrace& whole = **streamed;
    model::RankTrace& kept = **lean;
    const size_t host_events = whole.host.size() + whole.annotations.size();
    auto last_end = [](const model::RankTrace& r) {
      model::TimeNs end = INT64_MIN;
      for (model::TimeNs t : r.host.end) end = std::max(end, t);
      return end;
    };
    if (kept.host.size() + kept.annotations.size() + kept.host_events_dropped != host_events ||
        last_end(kept) != last_end(whole) || kept.gpu.start != whole.gpu.start ||
        kept.comms.bytes != whole.comms.bytes || kept.stats.total() != whole.stats.total())
      std::abort();
    passes::FinishRank(&whole);
    passes::FinishRank(&kept);
    if (kept.gpu.launch != whole.gpu.launch || kept.comms.seq != whole.comms.seq || kept.steps.size() != whole.steps.size())
      std::abort();
  }
  if (!rank.ok()) return 0;
  model::Trace trace;
  rank->rank = 0;
  passes::FinishRank(&rank.value());
  trace.ranks.push_back(std::move(rank).value());
  passes::FinishJob(&trace);
  analysis::AnalyzeOptions options;
  options.threads = 1;
  analysis::JobAnalysis job = analysis::Analyze(trace, options);
  std::string json = report::AnalyzeToJson(trace, job).dump();
  std::string text = report::AnalyzeToText(trace, job, {});
  return json.empty() || text.empty() ? 1 : 0;
}
