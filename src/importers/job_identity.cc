#include "importers/job_identity.h"

#include <algorithm>
#include <ctime>
#include <map>
#include <numeric>
#include <set>

#include "common/strings.h"
#include "common/units.h"

namespace commlens::importers {

namespace {

// Hosts' clocks (NTP, PTP) differ by milliseconds; one job's profiled windows overlap.
constexpr model::TimeNs kSlack = 1'000'000'000;

struct GroupShape {
  int size = 0;
  std::vector<int> ranks;
  std::string description;
};

struct Candidate {
  JobOfRanks job;
  int world_size = 0;
  std::map<std::string, GroupShape> groups;
  std::set<int> ranks;
};

bool Agrees(const GroupShape& a, const model::ProcessGroup& b) {
  if (a.size > 0 && b.size > 0 && a.size != b.size) return false;
  if (!a.ranks.empty() && !b.ranks.empty() && a.ranks != b.ranks) return false;
  return a.description.empty() || b.description.empty() || a.description == b.description;
}

bool Fits(const Candidate& c, const model::RankTrace& r, model::TimeNs first, model::TimeNs last) {
  if (c.world_size > 0 && r.world_size > 0 && c.world_size != r.world_size) return false;
  for (const model::ProcessGroup& g : r.groups)
    if (auto it = c.groups.find(g.name); it != c.groups.end() && !Agrees(it->second, g)) return false;
  if (first == model::kNoTime || c.job.first == model::kNoTime) return true;
  return first <= c.job.last + kSlack && c.job.first <= last + kSlack;
}

void Join(Candidate* c, size_t index, const model::RankTrace& r, model::TimeNs first, model::TimeNs last) {
  c->job.members.push_back(index);
  if (r.rank >= 0 && !c->ranks.insert(r.rank).second) c->job.duplicates.push_back(index);
  if (c->world_size == 0) c->world_size = r.world_size;
  for (const model::ProcessGroup& g : r.groups) {
    GroupShape& s = c->groups[g.name];
    if (s.size == 0) s.size = g.size;
    if (s.ranks.empty()) s.ranks = g.ranks;
    if (s.description.empty()) s.description = g.description;
  }
  if (first == model::kNoTime) return;
  c->job.first = c->job.first == model::kNoTime ? first : std::min(c->job.first, first);
  c->job.last = c->job.last == model::kNoTime ? last : std::max(c->job.last, last);
}

std::string Utc(model::TimeNs ns) {
  const std::time_t s = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

}  // namespace

std::pair<model::TimeNs, model::TimeNs> TraceSpan(const model::RankTrace& r) {
  model::TimeNs first = model::kNoTime, last = model::kNoTime;
  auto add = [&](model::TimeNs a, model::TimeNs b) {
    if (a == model::kNoTime || b == model::kNoTime) return;
    first = first == model::kNoTime ? a : std::min(first, a);
    last = last == model::kNoTime ? b : std::max(last, b);
  };
  for (size_t i = 0; i < r.gpu.size(); ++i) add(r.gpu.start[i], r.gpu.end[i]);
  for (size_t i = 0; i < r.comms.size(); ++i) add(r.comms.start[i], r.comms.end[i]);
  for (const model::ProfilerStep& s : r.steps) add(s.start, s.end);
  for (size_t i = 0; i < r.host.size(); ++i) add(r.host.start[i], r.host.end[i]);
  if (r.gpu_last_end != model::kNoTime) add(r.gpu_last_end, r.gpu_last_end);
  return {first, last};
}

std::vector<JobOfRanks> SplitJobs(const std::vector<JobMember>& members) {
  std::vector<std::pair<model::TimeNs, model::TimeNs>> spans(members.size());
  for (size_t i = 0; i < members.size(); ++i) spans[i] = TraceSpan(*members[i].rank);
  // Earliest first, so each job's span grows from its start.
  std::vector<size_t> order(members.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return spans[a].first < spans[b].first; });
  std::vector<Candidate> jobs;
  for (size_t i : order) {
    const model::RankTrace& r = *members[i].rank;
    const auto [first, last] = spans[i];
    // A job it fits with a free rank number, else one it fits as a duplicate, else a new one.
    Candidate* home = nullptr;
    for (Candidate& c : jobs)
      if (Fits(c, r, first, last) && (r.rank < 0 || !c.ranks.count(r.rank))) {
        home = &c;
        break;
      }
    if (home == nullptr)
      for (Candidate& c : jobs)
        if (Fits(c, r, first, last)) {
          home = &c;
          break;
        }
    if (home == nullptr) {
      jobs.emplace_back();
      home = &jobs.back();
      home->job.first = home->job.last = model::kNoTime;
    }
    Join(home, i, r, first, last);
  }
  std::vector<JobOfRanks> out;
  for (Candidate& c : jobs) {
    std::sort(c.job.members.begin(), c.job.members.end());
    std::sort(c.job.duplicates.begin(), c.job.duplicates.end());
    out.push_back(std::move(c.job));
  }
  return out;
}

std::string DescribeJobs(const std::vector<JobOfRanks>& jobs, const std::vector<JobMember>& members,
                         const std::vector<std::string>& files) {
  std::string out;
  for (size_t k = 0; k < jobs.size(); ++k) {
    const JobOfRanks& j = jobs[k];
    std::vector<int> ranks;
    std::set<size_t> job_files;
    int world = 0;
    std::map<std::string, std::string> groups;
    for (size_t i : j.members) {
      const model::RankTrace& r = *members[i].rank;
      if (r.rank >= 0) ranks.push_back(r.rank);
      job_files.insert(members[i].file);
      world = std::max(world, r.world_size);
      for (const model::ProcessGroup& g : r.groups) groups[g.name] = g.description;
    }
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    std::string group_list;
    for (const auto& [name, desc] : groups) {
      if (group_list.size() > 80) {
        group_list += ", ...";
        break;
      }
      group_list += (group_list.empty() ? "" : ", ") + name + (desc.empty() || desc == name ? "" : " (" + desc + ")");
    }
    std::string file_list;
    size_t shown = 0;
    for (size_t f : job_files) {
      if (shown == 2) {
        file_list += " and " + std::to_string(job_files.size() - 2) + " more";
        break;
      }
      file_list += (shown++ ? ", " : "") + files[f];
    }
    out += "\n  job " + std::to_string(k + 1) + ": " + std::to_string(j.members.size()) + " rank" +
           (j.members.size() == 1 ? "" : "s") + (ranks.empty() ? "" : " (" + NumberRanges(ranks) + ")") +
           (world > 0 ? " of world size " + std::to_string(world) : "") +
           (group_list.empty() ? "" : ", groups " + group_list) +
           (j.first == model::kNoTime ? "" : "; from " + Utc(j.first) + " for " + FormatDuration(j.last - j.first)) +
           ": " + file_list;
  }
  return out;
}

}  // namespace commlens::importers
