// libFuzzer target: arbitrary bytes through the two readers of `commlens report --bench`,
// the benchmark's JSON and nccl-tests' text output, then through what the verb does with
// a report it read: the table shown again and a comparison of the report with itself.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "bench/bench_compare.h"
#include "bench/bench_json.h"
#include "bench/nccl_tests_log.h"
#include "bench/reporter.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace commlens;
  using namespace commlens::bench;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (bool json : {true, false}) {
    Result<BenchReport> r =
        json ? ParseBenchReport(text, "fuzz") : ParseNcclTestsLog(text, "fuzz");
    if (!r.ok()) continue;
    FormatReport(*r);
    FormatComparison(CompareBenchReports(*r, *r, 0), 1.0);
  }
  return 0;
}
