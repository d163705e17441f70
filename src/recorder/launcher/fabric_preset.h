// Fabric presets: the environment EFA and InfiniBand launch scripts set for NCCL, as one
// flag (`commlens record --preset efa`, `commlens env --preset efa`).
//
//   efa      libfabric's EFA provider with GPUDirect RDMA and fork safety, aws-ofi-nccl as
//            NCCL's network plugin and its tuner, AWS's buffer and chunk sizes
//   ib       NCCL_IB_HCA naming the active InfiniBand/RoCE ports (exact match)
//   efa-gin  efa, plus GPU-initiated networking: DeepEP's NCCL backend, GIN proxy mode
//
// A variable the user already set is kept, never replaced; the plan says which. Values
// that depend on the machine (library paths, HCA names) come from FabricFacts
// (fabric_facts.h), so planning is a pure function that tests drive with made-up facts.
// The checks (preset_checks.h) look at the environment the job will get.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "recorder/launcher/environment.h"
#include "recorder/launcher/nccl_version.h"
#include "topo/topology.h"

namespace commlens::recorder::launcher {

enum class Preset : uint8_t { kEfa, kIb, kEfaGin };

std::string_view PresetName(Preset preset);  // "efa", "ib", "efa-gin"
std::optional<Preset> ParsePreset(std::string_view name);
inline constexpr const char* kPresetNames = "efa, ib, efa-gin";

// Where a preset variable's value comes from.
enum class ValueFrom : uint8_t {
  kLiteral,    // |value| as written
  kLibrary,    // the path of the shared library |value| in FabricFacts::library_dirs;
               // |fallback| when it is not there (nullptr: leave the variable unset)
  kIbHcaList,  // "=mlx5_0:1,mlx5_1:1": the active InfiniBand and RoCE ports, exact names
};

struct PresetVariable {
  const char* name;
  ValueFrom from;
  const char* value;
  const char* fallback;
  const char* why;  // one line, for `commlens env` and the record log
};

// The variables of |preset| in the order they are set (efa-gin: efa's, then its own).
std::vector<PresetVariable> PresetTable(Preset preset);

// What the machine has, as far as the presets care.
struct FabricFacts {
  std::vector<std::string> library_dirs;  // where shared libraries are looked for, in order
  std::vector<topo::RdmaNic> rdma_nics;   // /sys/class/infiniband
  std::vector<std::string> sysfs_notes;   // why there are none (no RDMA driver)
  bool nccl_probed = false;               // false: NCCL was not looked for
  NcclLibrary nccl;
  bool peermem_loaded = false;  // the nvidia_peermem module (GPUDirect RDMA)
};

// The first of |library_dirs| holding |file|, as a path; empty when none does.
std::string FindLibrary(const std::vector<std::string>& library_dirs, std::string_view file);
// The ports a kIbHcaList value names: active InfiniBand and RoCE ports, "mlx5_0:1".
std::vector<std::string> ActiveIbPorts(const FabricFacts& facts);

enum class CheckLevel : uint8_t { kOk, kNote, kWarning, kError };
std::string_view CheckLevelName(CheckLevel level);  // "ok", "note", "warning", "error"

struct PresetCheck {
  CheckLevel level;
  std::string text;
};

struct PresetPlan {
  Preset preset = Preset::kEfa;
  struct Set {
    std::string name, value, why;
  };
  struct Kept {
    std::string name, user_value,
        preset_value;  // preset_value empty: it would have been left unset
  };
  std::vector<Set> set;    // variables the preset sets, in table order
  std::vector<Kept> kept;  // the user's value stays
  std::vector<PresetCheck> checks;

  bool HasError() const;
};

// The plan for a job whose environment is |env| before the preset, with its checks.
PresetPlan PlanPreset(Preset preset, const Environment& env, const FabricFacts& facts);
// Sets the plan's variables in |env| (the kept ones are already there).
void ApplyPreset(const PresetPlan& plan, Environment* env);

// `commlens env`: export lines for what is set; kept variables and checks as comments.
std::string PresetAsShell(const PresetPlan& plan);
// `commlens record`: "preset efa: set A=1 B=2; kept C=3 (yours; the preset's: 4)", then
// one line per check (only warnings and errors unless |all_checks|), each line starting
// with |prefix|.
std::string PresetAsLog(const PresetPlan& plan, std::string_view prefix, bool all_checks);

}  // namespace commlens::recorder::launcher
