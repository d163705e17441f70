// The replay's headline and the contention evidence together (findings.cc): the kernel it
// blames is called a victim of contention only where most of that kernel's time is in
// collectives slowed beside another group's (NCCL's kernel names are shared by every
// group and size, so one slowed group among several does not make the kernel a victim).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "analysis/analyze.h"
#include "analysis/findings.h"
#include "model/trace.h"

namespace commlens::analysis {
namespace {

constexpr char kKernel[] = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgs)";

// One rank whose all-reduce kernel ran |dp_ops| times for group "dp" and |tp_ops| times for
// group "tp" (each 1 ms, 64 MiB), and a replay that blames that kernel.
struct Job {
  model::Trace trace;
  JobAnalysis job;

  Job(int dp_ops, int tp_ops) {
    trace.groups = {{"dp", "", 2, {0, 1}, 0}, {"tp", "", 2, {0, 1}, 0}, {"ep", "", 2, {0, 1}, 0}};
    model::RankTrace& r = trace.ranks.emplace_back();
    r.rank = 0;
    for (uint32_t g = 0; g < 2; ++g) {
      model::ProcessGroup pg;
      pg.name = g == 0 ? "dp" : "tp";
      pg.job_group = g;
      r.groups.push_back(pg);
    }
    const model::StringId name = r.strings.Intern(kKernel);
    model::TimeNs t = 0;
    for (int i = 0; i < dp_ops + tp_ops; ++i, t += 2'000'000) {
      const uint32_t a = r.gpu.Append(t, t + 1'000'000, name, 0, 7, 0, model::ActivityKind::kKernel);
      r.gpu.comm[a] = r.comms.Append(t, t + 1'000'000, model::CommOp::kAllReduce, {}, 0, 0, 64 << 20,
                                     i < dp_ops ? 0 : 1, i, -1, a);
    }
    ReplayVerdict& v = job.replay;
    v.done = true;
    v.slowdown = 1.2;
    v.step = v.no_delay_step = 10'000'000;
    v.parts.push_back({"op", kKernel, 1.1, 9'000'000, 0.1});
  }
  // A contention row for |group|'s 64 MiB all-reduces: slowed beside ep's, or not.
  void Contention(const std::string& group, bool slowed) {
    ContentionRow c;
    c.group = group;
    c.op = model::CommOp::kAllReduce;
    c.size_lo = 64 << 20;
    c.alone = {10, 240, 250, 260};
    c.overlapped = slowed ? BandwidthSpread{10, 140, 150, 160} : BandwidthSpread{10, 245, 250, 255};
    c.with_groups = {"ep"};
    job.cross_rank.contention.push_back(c);
  }
  std::string ReplayText() const {
    for (const Finding& f : FindFindings(trace, job))
      if (f.rule == "replay") return f.text;
    return "";
  }
};

TEST(ReplayFinding, NamesTheKernelAVictimWhenMostOfItsTimeIsSlowedBesideAnotherGroup) {
  Job j(/*dp_ops=*/8, /*tp_ops=*/2);
  j.Contention("dp", true);
  j.Contention("tp", false);
  const std::string text = j.ReplayText();
  ASSERT_NE(text.find("is where the time goes"), std::string::npos) << text;
  EXPECT_NE(text.find("Most of its time is group dp all_reduce, which"), std::string::npos) << text;
  EXPECT_NE(text.find("60% of its alone bandwidth while group ep moves data"), std::string::npos) << text;
  EXPECT_NE(text.find("the kernel is the victim"), std::string::npos) << text;
}

TEST(ReplayFinding, SaysNothingOfContentionWhenTheSlowedGroupHoldsLittleOfTheKernel) {
  Job j(/*dp_ops=*/8, /*tp_ops=*/2);
  j.Contention("dp", false);
  j.Contention("tp", true);  // slowed, but 20% of the kernel's time
  const std::string text = j.ReplayText();
  ASSERT_NE(text.find("is where the time goes"), std::string::npos) << text;
  EXPECT_EQ(text.find("victim"), std::string::npos) << text;
}

TEST(ReplayFinding, SaysNothingOfContentionForAPartThatIsNoKernel) {
  Job j(8, 2);
  j.Contention("dp", true);
  j.job.replay.parts[0] = {"rank", "0", 1.1, 9'000'000, 0.1};
  const std::string text = j.ReplayText();
  ASSERT_NE(text.find("rank 0 is where the time goes"), std::string::npos) << text;
  EXPECT_EQ(text.find("victim"), std::string::npos) << text;
}

}  // namespace
}  // namespace commlens::analysis
