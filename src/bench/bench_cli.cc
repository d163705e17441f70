#include "bench/bench_cli.h"

#include <fmt/format.h>

#include "bench/collective_table.h"
#include "bench/errors.h"

namespace commlens::bench {

namespace {

std::string CollectiveNames() {
  std::vector<std::string_view> names;
  for (const CollectiveSpec& spec : Collectives()) names.push_back(spec.name);
  return fmt::format("{}", fmt::join(names, "|"));
}

}  // namespace

void AddBenchOptions(CLI::App& app, BenchCliArgs* a) {
  const BenchConfig d;  // the defaults, stated once in bench_config.h
  BenchConfig& c = a->config;
  app.add_option("collectives", a->collectives,
                 fmt::format("Collectives to run: {}|all (default all_reduce)", CollectiveNames()));
  app.add_option("-b,--minbytes", a->min_bytes,
                 fmt::format("Smallest size, K/M/G suffixes (default {})", d.min_bytes));
  app.add_option("-e,--maxbytes", a->max_bytes,
                 fmt::format("Largest size (default {})", FormatBytes(d.max_bytes)));
  app.add_option("-f,--stepfactor", c.step_factor,
                 fmt::format("Multiply the size by this factor (default {})", d.step_factor));
  app.add_option("-i,--stepbytes", a->step_bytes,
                 "Add this many bytes per step when the factor is 1 (default 1M)");
  app.add_option("-g,--ngpus", c.gpus_per_process,
                 "GPUs driven by each process (default: all visible GPUs for a single "
                 "process, 1 per process under a launcher)");
  app.add_option("-d,--dtype", a->dtype,
                 "Datatype: int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 "
                 "f8e4m3 f8e5m2 (default float)");
  app.add_option("-o,--op", a->op, "Reduction: sum prod max min (default sum)");
  app.add_option("-r,--root", c.root, "Root rank of broadcast and reduce (default 0)");
  app.add_option("-n,--iters", c.iters,
                 fmt::format("Timed iterations per size (default {})", d.iters));
  app.add_option("-w,--warmup", c.warmup,
                 fmt::format("Warm-up iterations per size (default {})", d.warmup));
  app.add_option("--spin-up", a->spin_up,
                 fmt::format("Run the largest size this long before each collective's warm-up, "
                             "so the first sizes are timed at steady clocks; 0 turns it off "
                             "(default {} ms)",
                             d.spin_up.count()));
  app.add_flag("--check,!--no-check", c.check,
               "Check every result against exact expected values (default on)");
  app.add_option("-c", a->check_level, "nccl-tests style: -c 0 disables the check");
  app.add_flag("--graph", c.graph, "Capture the timed iterations into a CUDA graph");
  app.add_option("--backend", a->backends,
                 fmt::format("Who moves the bytes of alltoall: {} (default nccl). nccl is "
                             "CPU-initiated (ncclAlltoAll); nccl-device stores over NVLink from a "
                             "kernel with NCCL's device API (LSA, one NVLink domain); nvshmem puts "
                             "from a kernel (needs NVSHMEM at run time); all runs each and prints "
                             "them side by side",
                             BackendChoices()))
      ->delimiter(',');
  app.add_option("--ctas", c.ctas,
                 fmt::format("CTAs of the nccl-device and nvshmem exchange kernels (default {})",
                             d.ctas));
  AddSessionOptions(app, &a->session, &c.json_path, &c.port, d.timeout);
}

Result<BenchConfig> BuildConfig(const BenchCliArgs& a) {
  BenchConfig c = a.config;
  if (!a.collectives.empty()) {
    c.collectives.clear();
    for (const std::string& name : a.collectives) {
      if (name == "all") {
        for (const CollectiveSpec& spec : Collectives()) c.collectives.push_back(spec.op);
        continue;
      }
      const CollectiveSpec* spec = FindCollective(name);
      if (!spec)
        return UsageError(fmt::format("unknown collective '{}'; expected {}|all", name,
                                      CollectiveNames()));
      c.collectives.push_back(spec->op);
    }
  }
  auto size = [](const std::string& text, int64_t* out) -> Status {
    if (text.empty()) return OkStatus();
    Result<int64_t> v = ParseByteSize(text);
    if (!v.ok()) return UsageError(v.status().message());
    *out = *v;
    return OkStatus();
  };
  COMMLENS_RETURN_IF_ERROR(size(a.min_bytes, &c.min_bytes));
  COMMLENS_RETURN_IF_ERROR(size(a.max_bytes, &c.max_bytes));
  COMMLENS_RETURN_IF_ERROR(size(a.step_bytes, &c.step_bytes));
  if (!a.dtype.empty()) {
    auto t = DataTypeFromName(a.dtype);
    if (!t) return UsageError(fmt::format("unknown datatype '{}'", a.dtype));
    c.dtype = *t;
  }
  if (!a.op.empty()) {
    auto o = RedOpFromName(a.op);
    if (!o)
      return UsageError(fmt::format(
          "unknown or unsupported reduction '{}'; expected sum, prod, max or min (avg is "
          "not exact in floating point, so it cannot be checked)",
          a.op));
    c.op = *o;
  }
  COMMLENS_RETURN_IF_ERROR(ApplySessionOptions(a.session, &c.timeout, &c.launcher));
  if (!a.spin_up.empty()) {
    Result<std::chrono::milliseconds> t = ParseDuration(a.spin_up);
    if (!t.ok()) return UsageError(t.status().message());
    c.spin_up = *t;
  }
  if (!a.backends.empty()) {
    Result<std::vector<Backend>> backends = ParseBackends(a.backends);
    if (!backends.ok()) return UsageError(backends.status().message());
    c.backends = *backends;
  }
  if (a.check_level >= 0) c.check = a.check_level > 0;
  Status valid = Validate(c);
  if (!valid.ok()) return UsageError(valid.message());
  return c;
}

}  // namespace commlens::bench
