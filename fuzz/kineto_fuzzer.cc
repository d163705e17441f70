// libFuzzer target: arbitrary bytes through the Kineto reader (gzip detection, JSON
// parse, table writer, finishing passes) and, when they import, through every analysis and both reports.
// Any crash, sanitizer report or hang is a bug: bad input must end in a Status or in
// counted bad events.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/analyze.h"
#include "importers/common/input_file.h"
#include "importers/kineto/kineto_importer.h"
#include "passes/finish.h"
#include "report/json_report.h"
#include "report/text_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace commlens;
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto file = importers::DecodeInput(bytes, "fuzz.json");
  if (!file.ok()) return 0;
  auto rank = importers::ImportKinetoTrace(file->buffer, "fuzz.json");
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
