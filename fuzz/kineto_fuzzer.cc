// libFuzzer target: arbitrary bytes through the Kineto reader (gzip detection, JSON
// parse, table writer, finishing passes) and, when they import, through every analysis and both reports.
// The same bytes also go through the streaming reader, from an in-memory file and with a
// small window (so that window boundaries fall everywhere): when both readers accept
// them, the tables they write must be the same.
// Any crash, sanitizer report or hang is a bug: bad input must end in a Status or in
// counted bad events.
#include <sys/mman.h>
#include <unistd.h>

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "analysis/analyze.h"
#include "importers/common/input_file.h"
#include "importers/kineto/kineto_importer.h"
#include "passes/finish.h"
#include "report/json_report.h"
#include "report/text_report.h"

// The streaming import of |data| through a memfd (the reader takes a path), or nothing
// when no memfd can be made.
std::optional<commlens::Result<commlens::model::RankTrace>> Stream(const uint8_t* data, size_t size, size_t window) {
  int fd = memfd_create("kineto_fuzz", 0);
  if (fd < 0) return std::nullopt;
  if (size > 0 && write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return std::nullopt;
  }
  auto r = commlens::importers::StreamKinetoTrace("/proc/self/fd/" + std::to_string(fd), {.window_bytes = window});
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
  // streaming reader, which cuts each top-level value out, reads past.
  simdjson::dom::parser validator;
  const bool valid = validator.parse(file->buffer.data(), file->buffer.size(), false).error() == simdjson::SUCCESS;
  if (valid && rank.ok() && streamed && streamed->ok()) {
    const model::RankTrace& a = *rank;
    const model::RankTrace& b = **streamed;
    bool same = a.gpu.start == b.gpu.start && a.gpu.end == b.gpu.end && a.host.start == b.host.start &&
                a.host.end == b.host.end && a.annotations.start == b.annotations.start &&
                a.flows.id == b.flows.id && a.comms.bytes == b.comms.bytes && a.rank == b.rank &&
                a.strings.size() == b.strings.size() && a.stats.total() == b.stats.total() &&
                a.input_bytes == b.input_bytes;
    if (!same) std::abort();  // the streaming reader disagrees with the whole-document one
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
