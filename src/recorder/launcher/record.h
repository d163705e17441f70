// `commlens record -o DIR [options] -- COMMAND...`: runs one process of a job (or the
// launcher of a whole job) with the NCCL profiler plugin and the sampler.
//
// Steps, in order:
//  1. block the forwarded signals (child_process.h), before any thread starts;
//  2. find who this process is (common/launch_env.h) and the command (exit 127 / 126 when it
//     cannot run);
//  3. create DIR; name the job (the launcher's id, else "local-<pid>" for a single
//     process, "job" for a launcher that gives none) and pass it on as COMMLENS_JOB_ID;
//  4. set the plugin's variables (NCCL_PROFILER_PLUGIN, COMMLENS_OUT, the capture window),
//     and the fabric preset, for the command only;
//  5. start the sampler when this process samples its host: local rank 0, a process with
//     no launcher, or record wrapping a launcher (--outer, or the command is torchrun,
//     mpirun, srun, ... and there is no launcher around record);
//  6. start the live metrics writer (--prometheus), run the command, pass signals on;
//  7. when it ends, stop the live metrics and the sampler (its last reading covers the
//     whole run) and return the command's exit code (128 + N when signal N killed it).
//
// record's own failures before the command starts (DIR cannot be created, no plugin)
// exit with 125, which no command's failure to start uses (126, 127).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "recorder/launcher/fabric_preset.h"
#include "common/launch_env.h"

namespace commlens::recorder::launcher {

inline constexpr int kExitRecordFailed = 125;
inline constexpr double kDefaultSampleHz = 10.0;

enum class OuterMode : uint8_t { kAuto, kOn, kOff };

struct CaptureWindow {
  std::optional<uint64_t> after_colls;  // COMMLENS_CAPTURE_AFTER_COLLS
  std::optional<double> after_s;        // COMMLENS_CAPTURE_AFTER_S
  std::optional<double> duration_s;     // COMMLENS_CAPTURE_DURATION_S
  std::string control;                  // COMMLENS_CONTROL (made absolute)
  std::string events;                   // COMMLENS_EVENT_MASK
  std::optional<uint32_t> kernel_sample;  // COMMLENS_KERNEL_SAMPLE
  std::string launch_timing;              // COMMLENS_LAUNCH_TIMING: events or off; "" the plugin's default
  // --cupti[=LIBCUPTI]: the CUPTI tracer (COMMLENS_CUPTI=1), its libcupti (given, else
  // FindCupti's) as COMMLENS_CUPTI_LIBRARY and NVTX_INJECTION64_PATH (NVTX ranges reach
  // CUPTI only through it). Unset: off; "": search.
  std::optional<std::string> cupti;
  // --cupti-kinds LIST: what the tracer asks CUPTI for (COMMLENS_CUPTI_KINDS; cupti_kinds.h);
  // without nvtx, NVTX is not injected.
  std::string cupti_kinds;
};

// libcupti where CUDA installs put it: $CUDA_HOME (or $CUDA_PATH) lib64 and lib, then
// /usr/local/cuda's; "" when none has libcupti.so.13 (the plugin then tries the loader's
// search path).
std::string FindCupti(const char* cuda_home);

struct RecordOptions {
  std::string out_dir;
  std::vector<std::string> command;
  std::optional<Preset> preset;
  bool plugin = true;
  std::string plugin_path;                 // empty: FindProfilerPlugin beside the executable
  std::string nccl_library = kNcclSoname;  // for the preset's NCCL version check
  CaptureWindow capture;
  bool sampler = true;
  double sample_hz = kDefaultSampleHz;
  bool gpu_metrics = true;
  std::vector<std::string> nics;  // empty: every RDMA port and physical interface
  OuterMode outer = OuterMode::kAuto;
  std::string prometheus;
  bool quiet = false;
};

// Runs the command; the exit code to exit with. Messages go to |log| (stderr).
int RunRecord(const RecordOptions& options, std::ostream& log);

// torchrun, mpirun, mpiexec, orterun, prterun, srun, deepspeed, "python -m
// torch.distributed.run" (or .launch), "accelerate launch".
bool IsLauncherCommand(const std::vector<std::string>& command);

// Whether this process runs the host's sampler, and why, in a few words.
struct SamplerRole {
  bool start = false;
  std::string why;
};
SamplerRole DecideSampler(const launch_env::LaunchEnv& who, bool outer, bool sampler_enabled);

// The job id record uses and passes on (COMMLENS_JOB_ID).
std::string ChooseJobId(const launch_env::LaunchEnv& who, long pid);

// Sets the plugin's variables for the command in |env|: NCCL_PROFILER_PLUGIN (when
// |plugin_path| is not empty), COMMLENS_OUT, the capture window and the CUPTI tracer.
// Returns a note when a variable the user had set is replaced, or for what --cupti found.
std::vector<std::string> SetPluginEnvironment(const std::string& plugin_path,
                                              const std::string& out_dir,
                                              const CaptureWindow& capture, Environment* env);

}  // namespace commlens::recorder::launcher
