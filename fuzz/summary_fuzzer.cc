// libFuzzer target: arbitrary bytes through the decoders of what `analyze --mpi` sends
// between its processes (analysis/rank_summary.h): a rank's summary, a batch of GPU
// stretch questions, their answers. The first byte picks the decoder. A summary that
// decodes is assembled into a job and analyzed as rank 0 would (the stretch questions
// answered with zeros), and the JSON report written; whatever decodes must re-encode to
// bytes that decode again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <sstream>
#include <span>

#include "analysis/analyze.h"
#include "analysis/rank_summary.h"
#include "passes/finish.h"
#include "report/json_report.h"

namespace {

using namespace commlens;

void Require(bool ok) {
  if (!ok) std::abort();
}

void AnalyzeAsRankZero(analysis::RankSummary s) {
  model::Trace trace;
  std::map<analysis::RankKey, analysis::RankAnalysis> analyses;
  analyses[{s.trace.path, s.trace.part}] = std::move(s.analysis);
  trace.ranks.push_back(std::move(s.trace));
  passes::FinishJob(&trace);
  auto ranks = analysis::PlaceRankAnalyses(trace, &analyses);
  Require(ranks.ok());
  analysis::AnswerStretches zeros = [](const analysis::PerRank<analysis::StretchQuestion>& questions) {
    analysis::PerRank<analysis::StretchAnswer> answers(questions.size());
    for (size_t r = 0; r < questions.size(); ++r) answers[r].resize(questions[r].size());
    return answers;
  };
  analysis::AnalyzeOptions options;
  options.threads = 1;
  const analysis::JobAnalysis job = analysis::AnalyzeJob(trace, std::move(ranks).value(), options, &zeros);
  std::ostringstream json;
  report::WriteJson(json, report::AnalyzeToJson(trace, job), -1);  // what analyze writes
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::span<const uint8_t> bytes(data + 1, size - 1);
  std::vector<uint8_t> again;
  switch (data[0] % 3) {
    case 0: {
      auto s = analysis::DecodeRankSummary(bytes);
      if (!s.ok()) return 0;
      analysis::EncodeRankSummary(*s, &again);
      Require(analysis::DecodeRankSummary(again).ok());
      AnalyzeAsRankZero(std::move(s).value());
      break;
    }
    case 1: {
      auto batch = analysis::DecodeStretchBatch(bytes);
      if (!batch.ok()) return 0;
      analysis::EncodeStretchBatch(*batch, &again);
      Require(analysis::DecodeStretchBatch(again).ok());
      break;
    }
    case 2: {
      auto answers = analysis::DecodeStretchAnswers(bytes);
      if (!answers.ok()) return 0;
      analysis::EncodeStretchAnswers(*answers, &again);
      Require(analysis::DecodeStretchAnswers(again).ok());
      break;
    }
  }
  return 0;
}
