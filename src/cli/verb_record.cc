// commlens record: runs a job (or one process of it) with the NCCL profiler plugin and
// the NIC/GPU sampler (src/recorder/launcher/record.h, docs/recorder.md "commlens record").
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/verbs.h"
#include "recorder/launcher/record.h"
#include "recorder/nccl_profiler/config.h"
#include "recorder/sampler/sampler.h"

namespace commlens::cli {

namespace rl = recorder::launcher;

void AddRecordVerb(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<rl::RecordOptions>();
  auto preset = std::make_shared<std::string>();
  auto no_plugin = std::make_shared<bool>(false);
  auto no_sampler = std::make_shared<bool>(false);
  auto no_gpu = std::make_shared<bool>(false);
  auto outer = std::make_shared<bool>(false);
  auto no_outer = std::make_shared<bool>(false);
  CLI::App* sub = app.add_subcommand(
      "record",
      "Run a job (or one process of it) with the NCCL profiler plugin and the NIC/GPU sampler:\n"
      "  srun commlens record -o DIR -- python train.py ...\n"
      "  torchrun --nproc-per-node 8 --no-python commlens record -o DIR -- python train.py ...\n"
      "  mpirun -np 16 commlens record -o DIR -- ./app ...\n"
      "  commlens record -o DIR -- torchrun --nproc-per-node 8 train.py ...   (around the "
      "launcher)\n"
      "then 'commlens analyze DIR'.");
  sub->add_option("-o,--out", o->out_dir,
                  "Folder for the traces and samples (created; may be shared by all hosts)")
      ->required()
      ->type_name("DIR");
  sub->add_option(
         "--preset", *preset,
         "Set and check the fabric environment: efa (libfabric EFA, aws-ofi-nccl), ib (the active "
         "InfiniBand/RoCE ports), efa-gin (efa plus GPU-initiated networking); variables you set "
         "are kept")
      ->check(CLI::IsMember({"efa", "ib", "efa-gin"}))
      ->type_name("NAME");
  sub->add_flag("--no-plugin", *no_plugin, "Do not load the NCCL profiler plugin (samples only)");
  sub->add_option("--plugin", o->plugin_path,
                  "The plugin to load (default: libnccl-profiler-commlens.so beside this commlens)")
      ->type_name("FILE");
  sub->add_option("--capture-after-colls", o->capture.after_colls,
                  "Start recording NCCL operations after this many collectives")
      ->type_name("N");
  sub->add_option("--capture-after", o->capture.after_s,
                  "Start recording this many seconds after the first communicator")
      ->check(CLI::NonNegativeNumber)
      ->type_name("SECONDS");
  sub->add_option("--capture-duration", o->capture.duration_s,
                  "Stop recording this long after it started")
      ->check(CLI::NonNegativeNumber)
      ->type_name("SECONDS");
  sub->add_option(
         "--control", o->capture.control,
         "A control file the plugin polls: 1 records, 0 switches NCCL's events off, c only counts, "
         "h records host times only (no GPU timing of NCCL's ops, the CUPTI tracer paused)")
      ->type_name("FILE");
  sub->add_option("--events", o->capture.events,
                  "What the plugin records: coll,p2p,kernel,proxy,step,api,launch,ce,phases or default "
                  "(or a number); kernel: NCCL's per-channel kernel timing (not in default: each op is "
                  "timed by --launch-timing instead); phases: NCCL 2.31+'s kernel barrier phases "
                  "(symmetric kernels), each op's wait for its peers on the GPU's clock")
      ->check([](const std::string& text) {
        uint32_t mask = 0;
        return recorder::ParseEventMask(text, &mask) ? std::string()
                                                     : "unknown event word in '" + text + "'";
      })
      ->type_name("LIST");
  sub->add_option("--launch-timing", o->capture.launch_timing,
                  "How each NCCL op gets its GPU start and end: events (the default: a CUDA event just "
                  "before and just after each NCCL kernel's launch, on its stream; needs NCCL 2.28+'s "
                  "launch events) or off (NCCL's per-channel kernel events instead, which cost the job "
                  "more: docs/performance.md)")
      ->check(CLI::IsMember({"events", "off"}))
      ->type_name("HOW");
  sub->add_option("--kernel-sample", o->capture.kernel_sample,
                  "Time 1 operation in N on the GPU (1, the default: every one), by the launch timer "
                  "or NCCL's kernel events; the others keep host times and are left out of durations "
                  "and busbw. Each timed launch costs the launching thread a few microseconds "
                  "(docs/performance.md)")
      ->check(CLI::Range(1, 1 << 20))
      ->type_name("N");
  sub->add_option_function<std::string>(
         "--cupti", [o](const std::string& lib) { o->capture.cupti = lib; },
         "Also record the GPU's kernels, copies, syncs and NVTX ranges through CUPTI, NCCL's ops "
         "timed by their kernels, in every process that initializes CUDA, NCCL or not (the plugin is "
         "named as CUDA_INJECTION64_PATH too, unless one is set) (LIBCUPTI: libcupti.so.13, else found under $CUDA_HOME or "
         "/usr/local/cuda). Costs 0.5% of a 30 ms step, several % of a launch-bound one "
         "(docs/performance.md). Steps aside when the PyTorch profiler or Nsight Systems holds CUPTI")
      ->expected(0, 1)
      ->type_name("[=LIBCUPTI]");
  sub->add_option("--cupti-kinds", o->capture.cupti_kinds,
                  "With --cupti: what CUPTI records, from kernel, memcpy, memset, sync, nvtx, api (the CUDA "
                  "calls that launch, copy, set and wait: 11-16% of a small step), all, default (all but "
                  "api); kernels always (docs/performance.md)")
      ->check([](const std::string& text) {
        uint32_t kinds = 0;
        return recorder::cupti::ParseCuptiKinds(text, &kinds) ? std::string()
                                                                : "unknown kind in '" + text + "'";
      })
      ->type_name("LIST");
  sub->add_option("--sample-hz", o->sample_hz,
                  "NIC counter readings per second (GPU metrics: at most 10)")
      ->check([](const std::string& text) {
        char* end = nullptr;
        double v = std::strtod(text.c_str(), &end);
        return *end == '\0' && v > 0 && v <= recorder::sampler::kMaxSampleHz
                   ? std::string()
                   : fmt::format("must be above 0 and at most {}", recorder::sampler::kMaxSampleHz);
      })
      ->capture_default_str()
      ->type_name("HZ");
  sub->add_flag("--no-sampler", *no_sampler, "Do not sample NIC counters and GPU metrics");
  sub->add_flag("--no-gpu-metrics", *no_gpu, "Sample NICs only (do not load NVML)");
  sub->add_option("--nic", o->nics,
                  "Sample only this device (repeatable): mlx5_0, mlx5_0:1, eth0, lo (default: "
                  "every RDMA port and "
                  "physical interface)")
      ->type_name("NAME");
  sub->add_flag(
      "--outer", *outer,
      "This record wraps a launcher: sample this host and pass signals to the launcher's process "
      "group "
      "(automatic when no launcher started record and COMMAND is torchrun, mpirun, srun, ...)");
  sub->add_flag("--no-outer", *no_outer, "Never treat COMMAND as a launcher");
  sub->add_option("--prometheus", o->prometheus,
                  "Write live metrics (NIC bytes/s, GPU utilization, seconds since each rank's "
                  "collectives last progressed: alert on it for a hang) every second to FILE, for "
                  "node_exporter's textfile collector; removed at the end")
      ->type_name("FILE");
  sub->add_option("--nccl-lib", o->nccl_library,
                  "The NCCL library whose version --preset checks (default: libnccl.so.2 on the "
                  "library path)")
      ->type_name("FILE");
  sub->add_flag("-q,--quiet", o->quiet, "Print only warnings and errors");
  sub->add_option("command", o->command, "The command to run, after --")
      ->required()
      ->type_name("COMMAND...");
  sub->positionals_at_end();
  sub->footer(
      "Each process writes DIR/<job>.rank<R>.<host>.<pid>.cltrace (the plugin) and one process per "
      "host "
      "DIR/<job>.<host>.samples.cltrace (the sampler); <job> is the launcher's job id (Slurm "
      "JOB.STEP, torchrun's "
      "run id, Open MPI's job id), passed on as COMMLENS_JOB_ID.\n"
      "SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 are passed on to COMMAND.\n"
      "Exit codes: COMMAND's own, or 128+N when signal N killed it; 127 = COMMAND not found, 126 = "
      "it cannot be "
      "run; 125 = record itself failed before starting it (DIR not writable, plugin not found); 64 "
      "= usage error.");
  sub->callback([o, preset, no_plugin, no_sampler, no_gpu, outer, no_outer, exit_code]() {
    if (*outer && *no_outer)
      throw CLI::ValidationError("--outer and --no-outer exclude each other");
    if (!preset->empty()) o->preset = rl::ParsePreset(*preset);
    o->plugin = !*no_plugin;
    o->sampler = !*no_sampler;
    o->gpu_metrics = !*no_gpu;
    o->outer = *outer ? rl::OuterMode::kOn : *no_outer ? rl::OuterMode::kOff : rl::OuterMode::kAuto;
    *exit_code = rl::RunRecord(*o, std::cerr);
  });
}

}  // namespace commlens::cli
