// Linux CPU lists ("0-47,96-143"), the format of sysfs cpulist files, hwloc's list
// output and nvidia-smi's "CPU Affinity" column.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace commlens::topo {

// Sorted, de-duplicated CPU numbers; nullopt when the text is not a CPU list. An empty
// text is an empty list (a memory-only NUMA node).
std::optional<std::vector<int>> ParseCpuList(std::string_view text);
// Ranges of consecutive CPUs joined by commas: {0,1,2,5} -> "0-2,5".
std::string FormatCpuList(const std::vector<int>& cpus);
// ParseCpuList then FormatCpuList; the text unchanged when it does not parse.
std::string CanonicalCpuList(std::string_view text);

}  // namespace commlens::topo
