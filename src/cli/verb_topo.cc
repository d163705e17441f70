// commlens topo: the machine's GPUs, NICs and NUMA layout, and whether it is healthy.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "cli/verbs.h"
#include "common/json_writer.h"
#include "topo/check.h"
#include "topo/discover.h"
#include "topo/gpu_facts_json.h"
#include "topo/link_matrix.h"
#include "topo/render.h"

namespace commlens::cli {
namespace {

// topo's own code (verbs.h): the JSON could not be written. 1 is --check's (topo/check.h).
constexpr int kExitNotWritten = 2;

struct TopoArgs {
  std::string json_path;
  std::string sysfs_root = "/";
  std::string gpu_facts_path;
  bool check = false;
  bool no_gpu_probe = false;
};

// The source of GPU facts: recorded ones (--gpu-facts), the driver on the live system,
// or none (nullptr, with |*reason|).
Result<std::unique_ptr<topo::GpuProbe>> MakeProbe(const TopoArgs& args, const topo::SysfsRoot& root,
                                                  std::string* reason) {
  if (!args.gpu_facts_path.empty()) {
    std::ifstream in(args.gpu_facts_path);
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) return Error("--gpu-facts " + args.gpu_facts_path + ": not readable JSON");
    Result<topo::GpuProbeResult> facts = topo::GpuFactsFromJson(doc);
    if (!facts.ok()) return Error("--gpu-facts " + args.gpu_facts_path + ": " + facts.status().message());
    facts->notes.push_back("GPU facts (names, NVLink, P2P) recorded in " +
                           std::filesystem::path(args.gpu_facts_path).filename().string() + ", not asked from a driver");
    return std::unique_ptr<topo::GpuProbe>(std::make_unique<topo::RecordedGpuProbe>(std::move(*facts)));
  }
  if (args.no_gpu_probe) {
    *reason = "--no-gpu-probe";
    return std::unique_ptr<topo::GpuProbe>();
  }
  // NVML and CUDA describe the live machine; a snapshot of another one gets no GPU facts.
  if (!root.IsLiveSystem()) {
    *reason = "the sysfs root is not the live system";
    return std::unique_ptr<topo::GpuProbe>();
  }
  return topo::MakeDriverGpuProbe();
}

int RunTopo(const TopoArgs& args) {
  std::error_code ec;
  if (!std::filesystem::is_directory(args.sysfs_root, ec)) {
    std::cerr << fmt::format("commlens topo: --sysfs-root {}: not a folder\n", args.sysfs_root);
    return kExitUsage;
  }
  topo::SysfsRoot root(args.sysfs_root);
  topo::DiscoverOptions options;
  Result<std::unique_ptr<topo::GpuProbe>> probe = MakeProbe(args, root, &options.no_probe_reason);
  if (!probe.ok()) {
    std::cerr << "commlens topo: " << probe.status().message() << "\n";
    return kExitUsage;
  }
  options.gpu_probe = probe->get();
  topo::Topology topology = topo::Discover(root, options);
  topo::LinkMatrix matrix = topo::BuildLinkMatrix(topology);
  std::vector<topo::Finding> findings = topo::RunChecks(topology, matrix);

  if (!args.json_path.empty()) {
    const nlohmann::json doc = topo::RenderJson(topology, matrix, findings);
    if (args.json_path == "-") {
      std::cout << JsonText(doc, 2) << "\n";
    } else if (Status written = WriteJsonFile(args.json_path, doc, 2); !written.ok()) {
      std::cerr << "commlens topo: " << written.message() << "\n";
      return kExitNotWritten;
    }
  }
  if (args.json_path != "-") std::cout << topo::RenderText(topology, matrix, findings, args.check);
  return args.check ? topo::ExitCodeFor(findings) : 0;
}

}  // namespace

void AddTopoVerb(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TopoArgs>();
  CLI::App* sub = app.add_subcommand("topo",
                                     "Show the GPU, NIC and NUMA topology (like nvidia-smi topo -m, plus RDMA NICs, "
                                     "P2P status and NVLink speeds) and check it for faults");
  sub->add_option("--json", args->json_path, "Also write the topology as JSON to FILE ('-': JSON only, to stdout)")
      ->type_name("FILE");
  sub->add_flag("--check", args->check,
                "List findings (GPU without a NIC on its PCIe switch, port down or slow, P2P off between NVLink "
                "GPUs, GPU and nearest NIC on different NUMA nodes, ...) and set the exit code");
  sub->add_option("--sysfs-root", args->sysfs_root,
                  "Read sysfs below DIR instead of / (a snapshot of another machine; NVML, CUDA and hwloc are then "
                  "not asked)")
      ->type_name("DIR");
  sub->add_flag("--no-gpu-probe", args->no_gpu_probe, "Do not load NVML or the CUDA driver");
  sub->add_option("--gpu-facts", args->gpu_facts_path,
                  "Take GPU facts (names, NVLink, P2P) from a JSON written by 'commlens topo --json' on the machine "
                  "that --sysfs-root is a snapshot of")
      ->type_name("FILE");
  sub->footer(
      "Exit codes: 0 = report written (with --check: no finding at warning level or above); 1 = --check found a "
      "warning or an error; 2 = the JSON file could not be written; 64 = usage error (an unknown option, bad "
      "--sysfs-root or --gpu-facts).\n"
      "Works without GPUs or RDMA NICs: the report says what it could not see.");
  sub->callback([args, exit_code]() { *exit_code = RunTopo(*args); });
}

}  // namespace commlens::cli
