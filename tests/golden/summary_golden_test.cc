// The analysis of `analyze --mpi` on one process (analysis/rank_summary.h): every rank
// analyzed where it was imported and summarized without its GPU table, the summary
// encoded and decoded as it travels, the job assembled from summaries, the cross-rank
// stretch questions asked of the kept tables in one round (their encodings too). On every
// shipped sample job, with host events kept and dropped, clocks as loaded and aligned on
// collectives, the JSON and text reports equal those of the whole model, and with the
// defaults they equal the goldens.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <string>
#include <tuple>

#include "analysis/analyze.h"
#include "analysis/rank_summary.h"
#include "importers/trace_loader.h"
#include "report/json_report.h"
#include "report/text_report.h"

namespace commlens {
namespace {

using analysis::RankAnalysis;

struct Reports {
  std::string json, text;
  size_t stretch_questions = 0;
};

Reports Write(const model::Trace& trace, const analysis::JobAnalysis& job) {
  return {report::AnalyzeToJson(trace, job).dump(1), report::AnalyzeToText(trace, job, {})};
}

std::vector<std::string> Files(const std::string& workload) {
  std::filesystem::current_path(COMMLENS_SOURCE_DIR);
  auto files = importers::ExpandInputs({"examples/traces/" + workload});
  EXPECT_TRUE(files.ok()) << files.status().message();
  return files.ok() ? files.value() : std::vector<std::string>{};
}

Reports Whole(const std::string& workload, const importers::LoadOptions& load) {
  auto trace = importers::AssembleJob(Files(workload), importers::ImportFiles(Files(workload), load), load);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  // The what-if replay runs in one process only (not from summaries): left out here.
  analysis::AnalyzeOptions options;
  options.replay = false;
  return Write(*trace, analysis::Analyze(*trace, options));
}

// Files alternate between two owners, as two processes would hold them.
Reports ViaSummaries(const std::string& workload, const importers::LoadOptions& load) {
  const std::vector<std::string> files = Files(workload);
  analysis::KeptRanks kept[2];
  std::map<analysis::RankKey, int> owner;
  std::map<analysis::RankKey, RankAnalysis> analyses;
  std::vector<importers::ImportedFile> imported;
  std::vector<importers::ImportedFile> files_in;
  for (const std::string& f : files) files_in.push_back(importers::ImportOneFile(f, load));
  // The steps the summary covers, from every rank's steps before any meets (as rank 0
  // chooses them under --mpi).
  std::vector<const std::vector<model::ProfilerStep>*> steps;
  for (const auto& f : files_in)
    for (const model::RankTrace& r : f.ranks) steps.push_back(&r.steps);
  analysis::AnalyzeOptions options;
  options.steps = analysis::ChooseSteps(steps).value();
  for (size_t i = 0; i < files.size(); ++i) {
    importers::ImportedFile f = std::move(files_in[i]);
    for (model::RankTrace& r : f.ranks) {
      model::RankTrace table;
      analysis::RankSummary s = analysis::SummarizeRank(std::move(r), options, &table);
      EXPECT_EQ(s.trace.gpu.size(), 0u);
      kept[i % 2].Keep(std::move(table));
      std::vector<uint8_t> bytes;
      analysis::EncodeRankSummary(s, &bytes);
      auto back = analysis::DecodeRankSummary(bytes);
      EXPECT_TRUE(back.ok()) << back.status().message();
      const analysis::RankKey key{back->trace.path, back->trace.part};
      owner[key] = static_cast<int>(i % 2);
      analyses[key] = std::move(back->analysis);
      r = std::move(back->trace);
    }
    imported.push_back(std::move(f));
  }
  auto trace = importers::AssembleJob(files, std::move(imported), load);
  EXPECT_TRUE(trace.ok()) << trace.status().message();
  auto ranks = analysis::PlaceRankAnalyses(*trace, &analyses);
  EXPECT_TRUE(ranks.ok()) << ranks.status().message();
  size_t asked = 0;
  analysis::AnswerStretches answer = [&](const analysis::PerRank<analysis::StretchQuestion>& questions) {
    analysis::StretchRound round = analysis::SplitByOwner(*trace, questions, [&](size_t r) {
      return owner.at({trace->ranks[r].path, trace->ranks[r].part});
    });
    for (auto& [who, batch] : round.batches) {
      std::vector<uint8_t> bytes;
      analysis::EncodeStretchBatch(batch, &bytes);
      auto got = analysis::DecodeStretchBatch(bytes);
      EXPECT_TRUE(got.ok()) << got.status().message();
      for (const analysis::StretchBatchItem& item : *got) asked += item.questions.size();
      auto answers = kept[who].Answer(*got);
      EXPECT_TRUE(answers.ok()) << answers.status().message();
      bytes.clear();
      analysis::EncodeStretchAnswers(*answers, &bytes);
      auto back = analysis::DecodeStretchAnswers(bytes);
      EXPECT_TRUE(back.ok()) << back.status().message();
      Status placed = round.Place(who, std::move(back).value());
      EXPECT_TRUE(placed.ok()) << placed.message();
    }
    return round.answers;
  };
  analysis::JobAnalysis job = analysis::AnalyzeJob(*trace, std::move(ranks).value(), options, &answer);
  Reports out = Write(*trace, job);
  out.stretch_questions = asked;
  return out;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The goldens are the CLI's, whose single process also replays the steps (whatif.h): the
// summaries, as --mpi, do not. Their replay section and finding are left out to compare.
nlohmann::json WithoutReplay(nlohmann::json j) {
  j.erase("replay");
  nlohmann::json kept = nlohmann::json::array();
  for (const auto& f : j["findings"])
    if (f["rule"] != "replay") kept.push_back(f);
  j["findings"] = kept;
  return j;
}
std::string WithoutReplay(const std::string& text) {
  std::string out;
  bool skipping = false;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    const std::string line = text.substr(at, end - at);
    if (line.starts_with("- Replaying the steps")) skipping = true;
    else if (!line.starts_with("  ")) skipping = false;
    if (!skipping) out += line;
    at = end;
  }
  return out;
}

using Case = std::tuple<std::string, bool, model::AlignMode>;  // workload, drop host events, align

class SummaryGolden : public ::testing::TestWithParam<Case> {};

TEST_P(SummaryGolden, ReportsEqualTheWholeModels) {
  const auto& [workload, drop, align] = GetParam();
  importers::LoadOptions load;
  load.drop_host_events = drop;
  load.align = align;
  const Reports whole = Whole(workload, load), summarized = ViaSummaries(workload, load);
  EXPECT_EQ(summarized.json, whole.json);
  EXPECT_EQ(summarized.text, whole.text);
  // The jobs whose findings look into the GPU timelines: a late rank's cause, the
  // pipeline's bubbles.
  if (workload.starts_with("cross-rank/slow") || workload.starts_with("cross-rank/pipeline")) {
    EXPECT_GT(summarized.stretch_questions, 0u);
  }
  if (!drop && align == model::AlignMode::kAuto) {
    std::string golden = workload;
    for (char& c : golden)
      if (c == '/') c = '.';
    golden = std::string(COMMLENS_SOURCE_DIR) + "/tests/golden/" + golden + ".analyze.";
    EXPECT_EQ(summarized.text, WithoutReplay(ReadAll(golden + "txt")));
    EXPECT_EQ(nlohmann::json::parse(summarized.json), WithoutReplay(nlohmann::json::parse(ReadAll(golden + "json"))));
  }
}

INSTANTIATE_TEST_SUITE_P(
    SampleJobs, SummaryGolden,
    ::testing::Combine(::testing::Values("ddp", "fsdp", "moe", "native", "cross-rank/pipeline-1f1b",
                                         "cross-rank/pipeline-gpipe", "cross-rank/contention", "cross-rank/slow-compute",
                                         "cross-rank/slow-host", "cross-rank/hang", "cross-rank/hang/native"),
                       ::testing::Bool(), ::testing::Values(model::AlignMode::kAuto, model::AlignMode::kCollectives)));

// What travels between the processes is checked as it is read: every truncation is
// refused with a message, and a damaged byte never reads out of bounds (it decodes or is
// refused).
TEST(RankSummaryCodec, TruncatedAndDamagedBuffersAreRefusedNotMisread) {
  std::filesystem::current_path(COMMLENS_SOURCE_DIR);
  importers::LoadOptions load;
  load.drop_host_events = true;  // as analyze imports
  importers::ImportedFile f = importers::ImportOneFile("examples/traces/ddp/rank0.json.gz", load);
  ASSERT_EQ(f.ranks.size(), 1u) << f.error;
  model::RankTrace table;
  analysis::RankSummary s = analysis::SummarizeRank(std::move(f.ranks[0]), {}, &table);
  std::vector<uint8_t> summary;
  analysis::EncodeRankSummary(s, &summary);
  std::vector<analysis::StretchBatchItem> batch(1);
  batch[0].path = table.path;
  batch[0].job_group_of = {0, 1};
  batch[0].questions = {{0, 1'000'000, 0, true}, {5, 7, model::kNoIndex, false}};
  std::vector<uint8_t> questions;
  analysis::EncodeStretchBatch(batch, &questions);
  analysis::KeptRanks kept;
  kept.Keep(std::move(table));
  auto answers = kept.Answer(batch);
  ASSERT_TRUE(answers.ok()) << answers.status().message();
  std::vector<uint8_t> replies;
  analysis::EncodeStretchAnswers(*answers, &replies);

  auto check = [](const std::vector<uint8_t>& bytes, auto decode) {
    ASSERT_TRUE(decode(std::span<const uint8_t>(bytes)).ok());
    // Every cut in the first 4 KB, then one in 509 bytes.
    for (size_t n = 0; n < bytes.size(); n += n < 4096 ? 1 : 509) {
      auto got = decode(std::span<const uint8_t>(bytes).first(n));
      EXPECT_FALSE(got.ok()) << "cut at " << n;
      if (!got.ok()) {
        EXPECT_FALSE(got.status().message().empty());
      }
    }
    std::vector<uint8_t> damaged = bytes;
    for (size_t at = 0; at < damaged.size(); at += 1 + at / 64) {
      const uint8_t was = damaged[at];
      damaged[at] = static_cast<uint8_t>(was ^ 0xff);
      (void)decode(std::span<const uint8_t>(damaged));
      damaged[at] = was;
    }
  };
  // A summary whose comm ops table has a column one row short: refused, never handed to
  // the analyses (which index every column by the first one's rows).
  Result<analysis::RankSummary> uneven = analysis::DecodeRankSummary(summary);
  ASSERT_TRUE(uneven.ok()) << uneven.status().message();
  ASSERT_FALSE(uneven->trace.comms.launch.empty());
  uneven->trace.comms.launch.pop_back();
  std::vector<uint8_t> uneven_summary;
  analysis::EncodeRankSummary(*uneven, &uneven_summary);
  auto refused = analysis::DecodeRankSummary(uneven_summary);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("comm ops: column 18"), std::string::npos) << refused.status().message();
  // The fuzzer's seeds (fuzz/summary_fuzzer.cc: the first byte picks the decoder) are
  // these three buffers and the uneven summary: COMMLENS_SUMMARY_SEEDS=fuzz/corpus/summary
  // writes them.
  if (const char* seeds = std::getenv("COMMLENS_SUMMARY_SEEDS")) {
    int which = 0;
    for (const std::vector<uint8_t>* b : {&summary, &questions, &replies}) {
      std::ofstream out(std::string(seeds) + "/seed-" + std::to_string(which), std::ios::binary);
      out.put(static_cast<char>(which++));
      out.write(reinterpret_cast<const char*>(b->data()), static_cast<std::streamsize>(b->size()));
    }
    std::ofstream out(std::string(seeds) + "/seed-0-columns-of-unequal-length", std::ios::binary);
    out.put(0);
    out.write(reinterpret_cast<const char*>(uneven_summary.data()), static_cast<std::streamsize>(uneven_summary.size()));
  }
  check(summary, [](std::span<const uint8_t> b) { return analysis::DecodeRankSummary(b); });
  check(questions, [](std::span<const uint8_t> b) { return analysis::DecodeStretchBatch(b); });
  check(replies, [](std::span<const uint8_t> b) { return analysis::DecodeStretchAnswers(b); });
  // A rank this process never imported is named, not guessed.
  batch[0].path = "elsewhere.json";
  auto unknown = kept.Answer(batch);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("elsewhere.json"), std::string::npos);
}

}  // namespace
}  // namespace commlens
