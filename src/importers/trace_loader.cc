#include "importers/trace_loader.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "common/file.h"
#include "common/parallel_for.h"
#include "common/strings.h"
#include "importers/job_identity.h"
#include "importers/nsys/nsys_rep_export.h"
#include "importers/registry.h"
#include "model/host_events.h"
#include "passes/finish.h"
#include "passes/passes.h"

namespace commlens::importers {

namespace fs = std::filesystem;

namespace {

bool IsTraceFileName(const std::string& name) {
  return EndsWith(name, ".json") || EndsWith(name, ".json.gz") || EndsWith(name, ".gz") ||
         EndsWith(name, ".cltrace") || EndsWith(name, ".sqlite") || EndsWith(name, kNsysReportSuffix);
}

// A folder with both report.nsys-rep and its export report.sqlite is read once, from the
// export (the cache commlens or the user made).
void DropReportsWithExports(std::vector<std::string>* found) {
  std::vector<std::string> kept;
  for (const std::string& f : *found) {
    if (EndsWith(f, kNsysReportSuffix)) {
      std::string exported = f.substr(0, f.size() - kNsysReportSuffix.size()) + ".sqlite";
      if (std::find(found->begin(), found->end(), exported) != found->end()) continue;
    }
    kept.push_back(f);
  }
  *found = std::move(kept);
}

std::string FileName(const std::string& path) { return fs::path(path).filename().string(); }

}  // namespace

Result<std::vector<std::string>> ExpandInputs(const std::vector<std::string>& inputs,
                                              std::vector<std::string>* skipped) {
  if (inputs.empty()) return Error("no trace files or directories given");
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code ec;
    fs::file_status st = fs::status(input, ec);
    if (ec || !fs::exists(st)) return Error(input + ": no such file or directory");
    if (fs::is_directory(st)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::directory_iterator(input, ec)) {
        if (!entry.is_regular_file()) continue;
        std::string name = entry.path().filename().string();
        if (IsTraceFileName(name)) found.push_back(entry.path().string());
      }
      if (ec) return Error(input + ": cannot list directory: " + ec.message());
      std::sort(found.begin(), found.end());
      // A folder holds what the job wrote beside its traces (config.json, a step log):
      // each file's first bytes decide (registry.h), read in parallel (thousands of ranks).
      std::vector<uint8_t> trace(found.size(), 0);
      ParallelFor(found.size(), 0, [&](size_t i) { trace[i] = LooksLikeTraceFile(found[i]); });
      std::vector<std::string> traces;
      for (size_t i = 0; i < found.size(); ++i) {
        if (trace[i]) traces.push_back(std::move(found[i]));
        else if (skipped) skipped->push_back(std::move(found[i]));
      }
      if (traces.empty())
        return Error(input + ": no trace files in this directory (looked for *.json, *.json.gz, "
                             "*.gz, *.cltrace, *.sqlite, *.nsys-rep" +
                     std::string(found.empty() ? ")" : "; the files of those names hold no trace a format commlens "
                                                       "reads)"));
      DropReportsWithExports(&traces);
      files.insert(files.end(), traces.begin(), traces.end());
    } else {
      files.push_back(input);
    }
  }
  return files;
}

std::string SkippedFilesNote(const std::vector<std::string>& skipped) {
  if (skipped.empty()) return {};
  constexpr size_t kNamed = 3;
  std::string names;
  for (size_t i = 0; i < skipped.size() && i < kNamed; ++i) names += (i ? ", " : "") + skipped[i];
  if (skipped.size() > kNamed) names += ", ... (" + std::to_string(skipped.size() - kNamed) + " more)";
  return std::to_string(skipped.size()) + (skipped.size() == 1 ? " file" : " files") +
         " in the input folders skipped: not a trace of a format commlens reads (by content): " + names;
}

int RankFromFileName(const std::string& path) {
  std::string name = FileName(path);
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t at = lower.find("rank");
  while (at != std::string::npos) {
    size_t i = at + 4;
    while (i < lower.size() && (lower[i] == '-' || lower[i] == '_' || lower[i] == '.')) ++i;
    if (i < lower.size() && std::isdigit(static_cast<unsigned char>(lower[i]))) {
      int r = 0;
      while (i < lower.size() && std::isdigit(static_cast<unsigned char>(lower[i])) && r < 100000000)
        r = r * 10 + (lower[i++] - '0');
      return r;
    }
    at = lower.find("rank", at + 4);
  }
  return -1;
}

uint64_t InputFileSize(const std::string& path) {
  std::error_code ec;
  uint64_t size = fs::is_regular_file(path, ec) ? fs::file_size(path, ec) : 0;
  return ec ? 0 : size;
}

ImportedFile ImportedFile::From(Result<std::vector<model::RankTrace>> imported) {
  ImportedFile f;
  if (imported.ok()) f.ranks = std::move(imported).value();
  else f.error = imported.status().message();
  return f;
}

ImportedFile ImportOneFile(const std::string& path, const LoadOptions& options) {
  ImportedFile f = ImportedFile::From(ImportFile(path, {options.drop_host_events}));
  for (size_t k = 0; k < f.ranks.size(); ++k) {
    f.ranks[k].part = static_cast<uint32_t>(k);
    if (options.drop_host_events) model::DropHostEvents(&f.ranks[k]);
  }
  return f;
}

std::vector<ImportedFile> ImportFiles(const std::vector<std::string>& files, const LoadOptions& options) {
  // One file gives one rank, or several (an Nsight Systems report of a whole node).
  std::vector<ImportedFile> imported(files.size());
  LoadProgress* progress = options.progress;
  if (progress) {
    uint64_t total = 0;
    for (const std::string& f : files) total += InputFileSize(f);
    progress->bytes_total = total;
    progress->files_total = files.size();
  }
  ParallelFor(files.size(), options.threads, [&](size_t i) {
    ScopedReadCounter counting(progress ? &progress->bytes_read : nullptr);
    imported[i] = ImportOneFile(files[i], options);
    if (progress) ++progress->files_done;
  });
  return imported;
}

namespace {

// A samples file (recorder/sampler) holds one host's NIC counters and GPU metrics: they
// become the job's counters, its notes the job's sampler notes, its unusable records a
// warning.
void TakeHostCounters(const std::string& file, model::RankTrace* r, model::Trace* trace) {
  for (model::CounterSeries& c : r->counters) trace->counters.push_back(std::move(c));
  for (const std::string& n : r->notes) trace->sampler_notes.push_back(file + ": " + n);
  std::string issues;
  for (size_t k = 0; k < static_cast<size_t>(model::ImportIssue::kCount); ++k) {
    const auto issue = static_cast<model::ImportIssue>(k);
    if (uint64_t n = r->stats.count(issue))
      issues += (issues.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(model::IssueName(issue));
  }
  if (!issues.empty()) trace->warnings.push_back(file + ": sample records not used: " + issues);
}

// With `record --cupti` every process that runs kernels writes a file, NCCL or not: a
// helper process (one that inherited a rank's launcher variables, or none) has one beside
// the rank's. They are set aside before the job is put together, so that one far from the
// job in time does not split it: a rank is its process that made NCCL calls, else the
// one with the most GPU activity, and a process with no rank and no NCCL call is a helper
// when ranked processes are there. Only recordings (native files) are judged so.
void SetAsideHelperProcesses(const std::vector<std::string>& files, std::vector<JobMember>* members,
                             std::vector<std::pair<size_t, size_t>>* at, model::Trace* trace) {
  const auto weight = [&](size_t m) {
    const model::RankTrace& r = *(*members)[m].rank;
    return std::pair(r.comms.size(), r.gpu.size());
  };
  const auto helper_like = [&](size_t m) {
    const model::RankTrace& r = *(*members)[m].rank;
    return r.format == "native" && r.comms.size() == 0;
  };
  std::map<int, size_t> best;  // rank -> member
  for (size_t m = 0; m < members->size(); ++m) {
    const int rank = (*members)[m].rank->rank;
    if (rank < 0) continue;
    auto [it, inserted] = best.emplace(rank, m);
    if (!inserted && weight(m) > weight(it->second)) it->second = m;
  }
  std::vector<JobMember> kept_members;
  std::vector<std::pair<size_t, size_t>> kept_at;
  for (size_t m = 0; m < members->size(); ++m) {
    const int rank = (*members)[m].rank->rank;
    const std::string& file = files[(*members)[m].file];
    if (rank >= 0 && best[rank] != m && helper_like(m)) {
      trace->warnings.push_back(file + ": another process of rank " + std::to_string(rank) +
                                " without NCCL calls (the rank's is " + files[(*members)[best[rank]].file] +
                                "): its GPU activity is left out");
      continue;
    }
    if (rank < 0 && !best.empty() && helper_like(m)) {
      trace->warnings.push_back(file + ": a process with no rank and no NCCL call beside the job's ranks: its GPU "
                                       "activity is left out");
      continue;
    }
    kept_members.push_back((*members)[m]);
    kept_at.push_back((*at)[m]);
  }
  *members = std::move(kept_members);
  *at = std::move(kept_at);
}

}  // namespace

Result<model::Trace> AssembleJob(const std::vector<std::string>& files, std::vector<ImportedFile> imported,
                                 const LoadOptions& options) {
  if (imported.size() != files.size()) return Error("internal: imported files do not match the inputs");
  model::Trace trace;
  std::vector<std::pair<size_t, size_t>> at;  // per member: (file, rank in file)
  std::vector<JobMember> members;
  for (size_t i = 0; i < files.size(); ++i) {
    if (!imported[i].error.empty()) {
      trace.failures.push_back({files[i], imported[i].error});
      continue;
    }
    std::vector<model::RankTrace>& loaded = imported[i].ranks;
    for (size_t k = 0; k < loaded.size(); ++k) {
      model::RankTrace& r = loaded[k];
      if (r.host_counters_only) {  // a node's sampler file: the job's counters, not a rank
        TakeHostCounters(files[i], &r, &trace);
        continue;
      }
      // A file name names one rank: a file that holds several ranks cannot use it.
      if (r.rank < 0 && loaded.size() == 1) {
        int from_name = RankFromFileName(files[i]);
        if (from_name >= 0) {
          r.rank = from_name;
          r.notes.push_back("no rank in the trace: rank " + std::to_string(from_name) + " taken from the file name");
        }
      }
      if (r.hostname.empty() && loaded.size() == 1) {
        r.hostname = passes::HostFromFileName(files[i]);
        if (!r.hostname.empty()) r.notes.push_back("host " + r.hostname + " taken from the file name");
      }
      at.push_back({i, k});
      members.push_back({&r, i});
    }
  }
  SetAsideHelperProcesses(files, &members, &at, &trace);
  // Ranks of different runs are not one job: refuse rather than mix them.
  const std::vector<JobOfRanks> jobs = SplitJobs(members);
  if (jobs.size() > 1)
    return Error("these inputs hold " + std::to_string(jobs.size()) +
                 " jobs (different world sizes or process groups, or traces that do not overlap in time); analyze "
                 "each apart:" +
                 DescribeJobs(jobs, members, files));
  std::map<int, size_t> owner;  // rank -> member
  std::vector<size_t> unranked;
  for (size_t m = 0; m < members.size(); ++m) {
    const auto [i, k] = at[m];
    const model::RankTrace& r = *members[m].rank;
    if (r.rank < 0) {
      unranked.push_back(m);
      continue;
    }
    auto [it, inserted] = owner.emplace(r.rank, m);
    if (!inserted) {
      trace.failures.push_back({files[i], files[i] + ": claims rank " + std::to_string(r.rank) + ", which " +
                                              files[members[it->second].file] + " already has; this " +
                                              (imported[i].ranks.size() > 1 ? "process" : "file") + " is skipped"});
    }
  }
  // Files with no rank anywhere get the lowest free numbers, in file-name order.
  int candidate = 0;
  for (size_t m : unranked) {
    while (owner.count(candidate)) ++candidate;
    model::RankTrace& r = imported[at[m].first].ranks[at[m].second];
    r.rank = candidate;
    r.notes.push_back("no rank in the trace or its file name: assigned rank " + std::to_string(candidate));
    owner.emplace(candidate, m);
  }
  for (auto& [rank, m] : owner) trace.ranks.push_back(std::move(imported[at[m].first].ranks[at[m].second]));
  // Ranks the stated world size has and no input holds.
  for (const model::RankTrace& r : trace.ranks) trace.world_size = std::max(trace.world_size, r.world_size);
  int64_t present = 0;
  for (const auto& [r, m] : owner) present += r < trace.world_size;
  trace.missing_count = trace.world_size - present;
  for (int r = 0; r < trace.world_size && trace.missing_ranks.size() < model::Trace::kMissingListed; ++r)
    if (!owner.count(r)) trace.missing_ranks.push_back(r);
  passes::FinishJob(&trace, {options.align});

  if (options.strict && !trace.failures.empty()) {
    std::string msg = "--strict: " + std::to_string(trace.failures.size()) + " file(s) failed:";
    for (const auto& f : trace.failures) msg += "\n  " + f.message;
    return Error(msg);
  }
  if (trace.ranks.empty() && options.counters_alone && !trace.counters.empty()) {
    trace.warnings.push_back(trace.failures.empty()
                                 ? "no NCCL operation was recorded (no rank's trace: the job made no NCCL call, or "
                                   "ran without the plugin); only the nodes' counters are analyzed"
                                 : "no rank's trace could be loaded; only the nodes' counters are analyzed");
    return trace;
  }
  if (trace.ranks.empty()) {
    std::string msg = trace.counters.empty() ? "no trace could be loaded:"
                                             : "no rank's trace could be loaded (only host counters):";
    for (const auto& f : trace.failures) msg += "\n  " + f.message;
    return Error(msg);
  }
  return trace;
}

Result<model::Trace> LoadTrace(const std::vector<std::string>& inputs, const LoadOptions& options) {
  std::vector<std::string> skipped;
  COMMLENS_ASSIGN_OR_RETURN(std::vector<std::string> files, ExpandInputs(inputs, &skipped));
  std::vector<ImportedFile> imported = ImportFiles(files, options);
  Result<model::Trace> trace = AssembleJob(files, std::move(imported), options);
  if (trace.ok() && !skipped.empty()) trace->warnings.push_back(SkippedFilesNote(skipped));
  return trace;
}

}  // namespace commlens::importers
