// The deal of the files and the bytes of analyze --mpi's messages (src/distributed), read
// back as the other end reads them, and refused when cut short.
#include "distributed/messages.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "distributed/plan.h"

namespace commlens::distributed {
namespace {

std::span<const uint8_t> Cut(const std::vector<uint8_t>& bytes, size_t drop) {
  return std::span<const uint8_t>(bytes).first(bytes.size() - drop);
}

TEST(DealFiles, LargestFirstToTheLeastLoadedRankZeroChargedAFifth) {
  // b (100) to 0: 101. d (90) to 1: 91, and 0 is charged 91/5: 119. c (20) to 1: 112,
  // 0 charged 4: 123. a (5) to 1 as well (112 < 123); without the charge it would go to 0.
  const Plan plan = DealFiles({"a", "b", "c", "d"}, {5, 100, 20, 90}, 2);
  EXPECT_EQ(plan.owner, (std::vector<uint64_t>{1, 0, 1, 1}));
  EXPECT_EQ(plan.FilesOf(0), (std::vector<size_t>{1}));
  EXPECT_EQ(plan.FilesOf(1), (std::vector<size_t>{3, 2, 0}));  // largest first
  // Ties go to the lower process: the same files, the same plan.
  const Plan even = DealFiles({"a", "b", "c"}, {7, 7, 7}, 3);
  EXPECT_EQ(even.owner, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(DealFiles({"a", "b", "c", "d"}, {5, 100, 20, 90}, 2).owner, plan.owner);
}

TEST(DealFiles, UnknownSizesStillSpread) {
  const Plan plan = DealFiles({"a", "b", "c", "d"}, {0, 0, 0, 0}, 2);
  EXPECT_EQ(plan.FilesOf(0).size() + plan.FilesOf(1).size(), 4u);
  EXPECT_FALSE(plan.FilesOf(1).empty());
}

TEST(PlanBytes, ReadBackAndRefusedWhenCut) {
  const Plan plan = DealFiles({"x/rank0.json.gz", "x/rank1.json.gz"}, {7, 9}, 2);
  const std::vector<uint8_t> bytes = EncodePlan(plan);
  const Plan back = DecodePlan(bytes);
  EXPECT_TRUE(back.error.empty()) << back.error;
  EXPECT_EQ(back.files, plan.files);
  EXPECT_EQ(back.sizes, plan.sizes);
  EXPECT_EQ(back.owner, plan.owner);
  EXPECT_EQ(DecodePlan(Cut(bytes, 1)).error, "internal: the plan from rank 0 is damaged");
  EXPECT_TRUE(DecodePlan(Cut(bytes, 1)).files.empty());

  Plan failed;
  failed.error = "no trace files in empty/";
  EXPECT_EQ(DecodePlan(EncodePlan(failed)).error, "no trace files in empty/");
}

TEST(StepsBytes, EveryRanksStepsAppendedAndRefusedWhenCut) {
  std::vector<importers::ImportedFile> files(2);
  files[0].ranks.resize(2);
  files[0].ranks[0].steps = {{3, 100, 200}, {4, 200, 350}};
  files[1].ranks.resize(1);
  files[1].ranks[0].steps = {{-1, -5, 0}};
  const std::vector<uint8_t> bytes = EncodeSteps(files);
  RankSteps steps = {{{9, 1, 2}}};  // already there: kept, the others appended
  ASSERT_TRUE(DecodeSteps(bytes, &steps));
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_TRUE(steps[2].empty());
  ASSERT_EQ(steps[1].size(), 2u);
  EXPECT_EQ(steps[1][1].number, 4);
  EXPECT_EQ(steps[1][1].end, 350);
  EXPECT_EQ(steps[3][0].number, -1);
  EXPECT_EQ(steps[3][0].start, -5);
  RankSteps cut;
  EXPECT_FALSE(DecodeSteps(Cut(bytes, 8), &cut));
  std::vector<uint8_t> longer = bytes;
  longer.push_back(0);
  EXPECT_FALSE(DecodeSteps(longer, &cut));
}

TEST(ChoiceBytes, TheChoiceOrItsErrorReadBack) {
  analysis::StepChoice c;
  c.selected_by_user = true;
  c.steps = {{1, 5000, "warm-up", true}, {2, 1000, "", false}};
  const std::vector<uint8_t> bytes = EncodeChoice(c);
  Result<analysis::StepChoice> back = DecodeChoice(bytes);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->selected_by_user);
  ASSERT_EQ(back->steps.size(), 2u);
  EXPECT_EQ(back->steps[0].number, 1);
  EXPECT_EQ(back->steps[0].length, 5000);
  EXPECT_EQ(back->steps[0].left_out, "warm-up");
  EXPECT_TRUE(back->steps[0].cut);
  EXPECT_EQ(back->steps[1].left_out, "");
  EXPECT_FALSE(back->steps[1].cut);
  EXPECT_EQ(DecodeChoice(Cut(bytes, 1)).status().message(), "internal: the steps from rank 0 are damaged");

  const Result<analysis::StepChoice> refused = Error("--steps 9: the traces have steps 1-2");
  EXPECT_EQ(DecodeChoice(EncodeChoice(refused)).status().message(), "--steps 9: the traces have steps 1-2");
}

TEST(FileBytes, HeaderThenSummariesReadBack) {
  std::filesystem::current_path(COMMLENS_SOURCE_DIR);
  importers::LoadOptions load;
  load.drop_host_events = true;
  importers::ImportedFile imported = importers::ImportOneFile("examples/traces/ddp/rank1.json.gz", load);
  ASSERT_TRUE(imported.error.empty()) << imported.error;
  ASSERT_EQ(imported.ranks.size(), 1u);
  SummarizedFile f;
  model::RankTrace table;
  f.ranks.push_back(analysis::SummarizeRank(std::move(imported.ranks[0]), {}, &table));

  const std::vector<uint8_t> message = EncodeFile(5, f);
  uint64_t file = 0, payload = 0;
  ASSERT_TRUE(ReadFileHeader(message, &file, &payload));
  EXPECT_EQ(file, 5u);
  EXPECT_EQ(payload, message.size() - kFileHeader);
  const std::span<const uint8_t> body = std::span<const uint8_t>(message).subspan(kFileHeader);
  const SummarizedFile back = DecodeFile(body, "examples/traces/ddp/rank1.json.gz", 2);
  EXPECT_TRUE(back.error.empty()) << back.error;
  ASSERT_EQ(back.ranks.size(), 1u);
  EXPECT_EQ(back.ranks[0].trace.rank, f.ranks[0].trace.rank);
  EXPECT_EQ(back.ranks[0].trace.path, f.ranks[0].trace.path);
  EXPECT_EQ(back.ranks[0].analysis.time.total.span, f.ranks[0].analysis.time.total.span);

  const SummarizedFile cut = DecodeFile(body.first(body.size() - 1), "examples/traces/ddp/rank1.json.gz", 2);
  EXPECT_TRUE(cut.ranks.empty());
  EXPECT_EQ(cut.error.rfind("examples/traces/ddp/rank1.json.gz: imported by MPI process 2 but not received whole: ", 0),
            0u)
      << cut.error;
  EXPECT_FALSE(ReadFileHeader(std::span<const uint8_t>(message).first(kFileHeader - 1), &file, &payload));
}

TEST(FileBytes, AFileThatFailedCarriesItsError) {
  const SummarizedFile f{"x.json: not a trace", {}};
  const std::vector<uint8_t> message = EncodeFile(0, f);
  const SummarizedFile back = DecodeFile(std::span<const uint8_t>(message).subspan(kFileHeader), "x.json", 1);
  EXPECT_EQ(back.error, "x.json: not a trace");
  EXPECT_TRUE(back.ranks.empty());
}

TEST(QuestionBytes, ReadBackAndRefusedWhenCut) {
  const std::vector<uint8_t> bytes = EncodeQuestion({3, 1, 123456, -42});
  DoingAtQuestion q;
  ASSERT_TRUE(DecodeQuestion(bytes, &q));
  EXPECT_EQ(q.file, 3u);
  EXPECT_EQ(q.part, 1u);
  EXPECT_EQ(q.input_bytes, 123456u);
  EXPECT_EQ(q.time, -42);
  EXPECT_FALSE(DecodeQuestion(Cut(bytes, 1), &q));
}

}  // namespace
}  // namespace commlens::distributed
