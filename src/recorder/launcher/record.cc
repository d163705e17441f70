#include "recorder/launcher/record.h"

#include <fmt/format.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <memory>

#include "recorder/launcher/child_process.h"
#include "recorder/launcher/environment.h"
#include "recorder/launcher/fabric_facts.h"
#include "recorder/launcher/live_metrics.h"
#include "recorder/launcher/plugin_locator.h"
#include "recorder/nccl_profiler/config.h"
#include "recorder/sampler/sampler.h"

namespace commlens::recorder::launcher {

namespace fs = std::filesystem;

namespace {

constexpr const char* kPrefix = "commlens record: ";

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int64_t RealtimeNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Record runs in the terminal's foreground: the terminal's signals reach its whole
// process group, the command included, and a launcher moved to a group of its own could
// not read the terminal.
bool InteractiveForeground() {
  return isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
}

Status MakeOutputDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  // Other ranks create it at the same moment: what counts is that it is there.
  if (fs::is_directory(dir)) return OkStatus();
  return Error("cannot create the output folder " + dir + (ec ? ": " + ec.message() : ""));
}

// The line record prints when it starts: who, what is recorded, where.
std::string StartLine(const launch_env::LaunchEnv& who, const std::string& job, const std::string& host,
                      bool outer, const std::string& dir, bool plugin, const SamplerRole& role,
                      bool sampler_enabled, double hz) {
  std::string s = kPrefix + (outer ? std::string("wrapping a launcher") : launch_env::DescribeLaunchEnv(who)) +
                  ", job " + job + ", host " + host + ": ";
  std::string what;
  if (plugin) what = "NCCL traces";
  if (role.start) what += (what.empty() ? "" : " and ") + fmt::format("{} Hz samples", hz);
  s += what.empty() ? "nothing to record" : what + " to " + dir;
  if (!role.start && sampler_enabled) s += " (samples: " + role.why + ")";
  return s + "\n";
}

// The plugin record loads: --plugin, else the one installed beside commlens.
Result<std::string> LocatePlugin(const RecordOptions& o) {
  if (o.plugin_path.empty()) return FindProfilerPlugin(ExecutableDir());
  std::error_code ec;
  if (!fs::is_regular_file(o.plugin_path, ec))
    return Error("--plugin " + o.plugin_path + ": no such file");
  return fs::absolute(o.plugin_path).lexically_normal().string();
}

Result<std::unique_ptr<sampler::Sampler>> CreateSampler(const RecordOptions& o,
                                                        const std::string& dir,
                                                        const std::string& job,
                                                        const std::string& host) {
  sampler::SamplerOptions so;
  so.output_dir = dir;
  so.job_id = job;
  so.hostname = host;
  so.hz = o.sample_hz;
  so.events_hz = std::min(so.events_hz, o.sample_hz);  // the sampler's own rates, never above hz
  so.gpu_hz = std::min(so.gpu_hz, o.sample_hz);
  so.gpus = o.gpu_metrics;
  so.nic.only = o.nics;
  so.nic.include_loopback = std::find(o.nics.begin(), o.nics.end(), "lo") != o.nics.end();
  return sampler::Sampler::Create(so);
}

// "; sampler: 8 series, 23 ticks (0 missed), 0.11% of a core" for the last line.
std::string SamplerSummary(const sampler::SamplerReport& r) {
  std::string s =
      fmt::format("; sampler: {} series, {} ticks ({} missed)", r.series, r.ticks, r.missed_ticks);
  if (r.wall_ns >= 1'000'000'000) s += fmt::format(", {:.2f}% of a core", 100.0 * r.CpuShare());
  // Where it went: the sources whose readings took the most time, with their mean.
  std::vector<const sampler::SamplerReport::SourceCost*> costly;
  for (const auto& c : r.sources)
    if (c.readings > 0) costly.push_back(&c);
  std::sort(costly.begin(), costly.end(), [](auto* a, auto* b) { return a->total_ns > b->total_ns; });
  for (size_t i = 0; i < costly.size() && i < 3; ++i)
    s += fmt::format("{}{} {}/reading", i == 0 ? " (" : ", ", costly[i]->name,
                     sampler::FormatCostNs(costly[i]->total_ns / costly[i]->readings));
  if (!costly.empty()) s += ")";
  // The notes (no NVML, devices skipped) are in the file; `commlens analyze` prints them.
  if (!r.notes.empty()) s += fmt::format(", {} note(s) in the samples file", r.notes.size());
  if (r.write_error != 0) s += fmt::format(", write error: {}", std::strerror(r.write_error));
  return s;
}

}  // namespace

bool IsLauncherCommand(const std::vector<std::string>& command) {
  if (command.empty()) return false;
  const std::string name = Basename(command[0]);
  for (const char* launcher :
       {"torchrun", "mpirun", "mpiexec", "orterun", "prterun", "srun", "deepspeed"})
    if (name == launcher) return true;
  if (name == "accelerate") return command.size() > 1 && command[1] == "launch";
  if (name.rfind("python", 0) == 0) {
    for (size_t i = 1; i + 1 < command.size(); ++i)
      if (command[i] == "-m")
        return command[i + 1] == "torch.distributed.run" ||
               command[i + 1] == "torch.distributed.launch";
  }
  return false;
}

SamplerRole DecideSampler(const launch_env::LaunchEnv& who, bool outer, bool sampler_enabled) {
  if (!sampler_enabled) return {false, "--no-sampler"};
  if (outer) return {true, "wrapping the launcher"};
  if (who.single_process()) return {true, "a single process"};
  if (who.local_rank == 0) return {true, "local rank 0"};
  if (who.local_rank < 0) {
    if (who.rank == 0) return {true, "rank 0 (local rank unknown: only rank 0's host is sampled)"};
    return {false, "local rank unknown: rank 0 samples its host"};
  }
  return {false, "local rank 0 samples this host"};
}

std::string ChooseJobId(const launch_env::LaunchEnv& who, long pid) {
  if (!who.job_id.empty()) return who.job_id;
  // Every rank must name the job alike: with a launcher that gives no id, a fixed word.
  return who.single_process() ? "local-" + std::to_string(pid) : "job";
}

std::vector<std::string> SetPluginEnvironment(const std::string& plugin_path,
                                              const std::string& out_dir,
                                              const CaptureWindow& capture, Environment* env) {
  std::vector<std::string> notes;
  auto set = [&](const char* name, const std::string& value) {
    if (const char* old = env->Get(name); old != nullptr && value != old)
      notes.push_back(std::string(name) + "=" + old + " replaced by " + value);
    env->Set(name, value);
  };
  if (!plugin_path.empty()) set("NCCL_PROFILER_PLUGIN", plugin_path);
  set("COMMLENS_OUT", out_dir);
  if (capture.after_colls)
    set("COMMLENS_CAPTURE_AFTER_COLLS", std::to_string(*capture.after_colls));
  if (capture.after_s) set("COMMLENS_CAPTURE_AFTER_S", fmt::format("{}", *capture.after_s));
  if (capture.duration_s)
    set("COMMLENS_CAPTURE_DURATION_S", fmt::format("{}", *capture.duration_s));
  if (!capture.control.empty())
    set("COMMLENS_CONTROL", fs::absolute(capture.control).lexically_normal().string());
  if (!capture.events.empty()) set("COMMLENS_EVENT_MASK", capture.events);
  if (capture.kernel_sample)
    set("COMMLENS_KERNEL_SAMPLE", std::to_string(*capture.kernel_sample));
  if (!capture.launch_timing.empty()) set("COMMLENS_LAUNCH_TIMING", capture.launch_timing);
  if (capture.cupti) {
    set("COMMLENS_CUPTI", "1");
    // The plugin is CUDA's injection library too: a process that never uses NCCL gets its
    // kernels, and one that does, its start. One set already (Nsight Systems sets its
    // own) is kept: the tracer then starts at NCCL's first init.
    const char* cuda = env->Get("CUDA_INJECTION64_PATH");
    if (cuda != nullptr && *cuda != '\0' && plugin_path != cuda)
      notes.push_back(std::string("--cupti: CUDA_INJECTION64_PATH=") + cuda + " kept: the tracer starts at NCCL's "
                      "first init, and processes that make no NCCL call are not traced");
    else if (!plugin_path.empty())
      env->Set("CUDA_INJECTION64_PATH", plugin_path);
    uint32_t kinds = cupti::kDefaultCuptiKinds;
    if (!capture.cupti_kinds.empty()) {
      set("COMMLENS_CUPTI_KINDS", capture.cupti_kinds);
      cupti::ParseCuptiKinds(capture.cupti_kinds, &kinds);  // checked by the command line
    }
    const char* home = env->Get("CUDA_HOME") ? env->Get("CUDA_HOME") : env->Get("CUDA_PATH");
    const std::string lib = capture.cupti->empty() ? FindCupti(home) : fs::absolute(*capture.cupti).string();
    if (lib.empty()) {
      notes.push_back("--cupti: no libcupti.so.13 under $CUDA_HOME or /usr/local/cuda: the plugin looks on the "
                      "loader's path, and NVTX ranges are not recorded (give --cupti=PATH)");
    } else {
      set("COMMLENS_CUPTI_LIBRARY", lib);
      // NVTX calls reach CUPTI only when NVTX loads it as its injection; one set already
      // (Nsight Systems sets its own) is kept.
      if (!(kinds & cupti::kCuptiNvtx)) {
        // No NVTX asked for: NVTX stays uninjected (each of its calls would reach CUPTI).
      } else if (const char* nvtx = env->Get("NVTX_INJECTION64_PATH"); nvtx != nullptr && lib != nvtx)
        notes.push_back(std::string("--cupti: NVTX_INJECTION64_PATH=") + nvtx + " kept: NVTX ranges go there, not to "
                        "the tracer");
      else
        env->Set("NVTX_INJECTION64_PATH", lib);
    }
  }
  return notes;
}

std::string FindCupti(const char* cuda_home) {
  std::vector<std::string> dirs;
  std::vector<fs::path> roots;
  if (cuda_home && *cuda_home) roots.push_back(fs::absolute(cuda_home));
  roots.push_back("/usr/local/cuda");
  for (const fs::path& root : roots)
    for (const char* dir : {"lib64", "lib", "extras/CUPTI/lib64", "targets/x86_64-linux/lib"})
      dirs.push_back((root / dir).string());
  return FindLibrary(dirs, "libcupti.so.13");
}

int RunRecord(const RecordOptions& o, std::ostream& log) {
  // First: every thread started below (the sampler's, its file writer, live metrics)
  // inherits the blocked signals, so they all arrive in Child::Wait.
  SignalForwarding signals;
  Environment env = Environment::FromProcess();
  const launch_env::LaunchEnv who = launch_env::DetectLaunchEnv(env.Lookup());
  for (const std::string& w : who.warnings) log << kPrefix << "note: " << w << "\n";

  const std::string shown = o.command.empty() ? "" : o.command[0];
  const ResolvedCommand cmd = ResolveCommand(shown, env.Get("PATH"));
  if (cmd.exit_code != 0) {
    log << kPrefix << "cannot run '" << shown << "': " << cmd.error << "\n";
    return cmd.exit_code;
  }
  const bool launcher_command = IsLauncherCommand(o.command);
  const bool outer = o.outer == OuterMode::kOn ||
                     (o.outer == OuterMode::kAuto && who.single_process() && launcher_command);
  const std::string job = ChooseJobId(who, static_cast<long>(getpid()));
  const std::string host = HostName();
  env.Set(launch_env::kJobIdVariable, job);
  const SamplerRole role = DecideSampler(who, outer, o.sampler);
  // The process that samples its host (with or without --no-sampler) also speaks for it:
  // the preset's report and the live metrics come once per host.
  const bool speaks = DecideSampler(who, outer, /*sampler_enabled=*/true).start;

  // The plugin and its settings, and the fabric preset: for the command only. Nothing is
  // created before both the command and the plugin are found.
  std::string plugin;
  if (o.plugin) {
    Result<std::string> found = LocatePlugin(o);
    if (!found.ok()) {
      log << kPrefix << found.status().message() << "\n";
      return kExitRecordFailed;
    }
    plugin = *found;
  }
  const std::string dir = fs::absolute(o.out_dir).lexically_normal().string();
  if (Status s = MakeOutputDir(dir); !s.ok()) {
    log << kPrefix << s.message() << "\n";
    return kExitRecordFailed;
  }
  if (o.plugin) {
    for (const std::string& note : SetPluginEnvironment(plugin, dir, o.capture, &env))
      log << kPrefix << "note: " << note << "\n";
    // The plugin's own reading of what it will get (a bad COMMLENS_* value the user set).
    for (const std::string& w : ParseConfig(env.Lookup()).warnings)
      if (std::find(who.warnings.begin(), who.warnings.end(), w) == who.warnings.end())
        log << kPrefix << "note: " << w << "\n";
  }
  if (o.preset) {
    FactsOptions facts_options;
    facts_options.nccl_library =
        speaks ? o.nccl_library : "";  // only the voice reports NCCL's version
    PresetPlan plan = PlanPreset(*o.preset, env, GatherFabricFacts(env, facts_options));
    ApplyPreset(plan, &env);
    if (speaks) log << PresetAsLog(plan, kPrefix, !o.quiet);
  }

  std::unique_ptr<sampler::Sampler> sampler;
  if (role.start) {
    Result<std::unique_ptr<sampler::Sampler>> created = CreateSampler(o, dir, job, host);
    if (!created.ok()) {
      log << kPrefix << "sampler: " << created.status().message() << "\n";
      return kExitRecordFailed;
    }
    sampler = std::move(*created);
  }
  if (!o.quiet)
    log << StartLine(who, job, host, outer, dir, !plugin.empty(), role, o.sampler, o.sample_hz);
  const int64_t start_ns = RealtimeNs();
  std::unique_ptr<LiveMetrics> metrics;
  if (!o.prometheus.empty() && speaks) {
    LiveMetricsOptions mo;
    mo.textfile = o.prometheus;
    mo.samples_path = sampler ? sampler->path() : "";
    mo.trace_dir = plugin.empty() ? "" : dir;
    mo.job_id = job;
    mo.host = host;
    mo.start_realtime_ns = start_ns;
    metrics = std::make_unique<LiveMetrics>(mo);
    // A first write now: a folder that is not there is said before the job, not after it.
    if (Status s = metrics->Update(start_ns); !s.ok()) {
      log << kPrefix << "--prometheus: " << s.message() << "; no live metrics\n";
      metrics.reset();
    }
  }

  // The command. A launcher gets a process group of its own, so a signal reaches its
  // workers too, unless record runs in a terminal's foreground (see InteractiveForeground).
  ChildOptions co;
  co.path = cmd.path;
  co.argv = o.command;
  co.env = env.Entries();
  co.own_process_group = (outer || launcher_command) && !InteractiveForeground();
  if (sampler) sampler->Start();
  if (metrics) metrics->Start();
  Child child = Child::Start(co, signals);
  int status = 0;
  int exit_code = 0;
  if (child.pid() < 0) {
    log << kPrefix << "cannot run '" << shown << "': " << child.start_error() << "\n";
    exit_code = child.start_exit_code();
  } else {
    status = child.Wait(signals, [&](int sig, bool passed_on) {
      if (passed_on && !o.quiet)
        log << kPrefix << "passing " << SignalName(sig) << " on to '" << shown << "'\n";
    });
    exit_code = ExitCodeOf(status);
  }

  // After the command: the sampler's last reading covers the whole run.
  const double seconds = static_cast<double>(RealtimeNs() - start_ns) / 1e9;
  if (metrics) {
    metrics->Stop();
    if (!metrics->first_error().empty())
      log << kPrefix << "--prometheus: " << metrics->first_error() << "\n";
  }
  const std::string summary = sampler ? SamplerSummary(sampler->Stop()) : "";
  if (child.pid() >= 0 && (!o.quiet || exit_code != 0) && (sampler || exit_code != 0))
    log << kPrefix << "'" << shown << "' " << DescribeWaitStatus(status)
        << fmt::format(" after {:.1f} s", seconds) << summary << "\n";
  return exit_code;
}

}  // namespace commlens::recorder::launcher
