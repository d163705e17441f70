#include "bench/bench_config.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace commlens::bench {

namespace {

constexpr int64_t k2To24 = int64_t{1} << 24;
constexpr int64_t k2To53 = int64_t{1} << 53;

// Exact integer limits: 2^(mantissa bits + 1) for floating types; the type's maximum
// for integers, capped at 2^53 because results are compared through a double.
constexpr std::array<DataTypeInfo, static_cast<size_t>(DataType::kCount)> kTypes = {{
    {DataType::kInt8, "int8", 1, 127},
    {DataType::kUint8, "uint8", 1, 255},
    {DataType::kInt32, "int32", 4, (int64_t{1} << 31) - 1},
    {DataType::kUint32, "uint32", 4, (int64_t{1} << 32) - 1},
    {DataType::kInt64, "int64", 8, k2To53},
    {DataType::kUint64, "uint64", 8, k2To53},
    {DataType::kHalf, "half", 2, 2048},
    {DataType::kFloat, "float", 4, k2To24},
    {DataType::kDouble, "double", 8, k2To53},
    {DataType::kBfloat16, "bfloat16", 2, 256},
    {DataType::kFp8E4M3, "f8e4m3", 1, 16},
    {DataType::kFp8E5M2, "f8e5m2", 1, 8},
}};

struct Alias {
  std::string_view name;
  DataType type;
};
constexpr Alias kTypeAliases[] = {
    {"char", DataType::kInt8},     {"i8", DataType::kInt8},       {"u8", DataType::kUint8},
    {"int", DataType::kInt32},     {"i32", DataType::kInt32},     {"u32", DataType::kUint32},
    {"i64", DataType::kInt64},     {"u64", DataType::kUint64},    {"f16", DataType::kHalf},
    {"fp16", DataType::kHalf},     {"float16", DataType::kHalf},  {"f32", DataType::kFloat},
    {"fp32", DataType::kFloat},    {"float32", DataType::kFloat}, {"f64", DataType::kDouble},
    {"fp64", DataType::kDouble},   {"float64", DataType::kDouble}, {"bf16", DataType::kBfloat16},
    {"fp8e4m3", DataType::kFp8E4M3}, {"fp8e5m2", DataType::kFp8E5M2},
};

constexpr std::array<std::string_view, static_cast<size_t>(RedOp::kCount)> kOpNames = {
    "sum", "prod", "max", "min"};

constexpr std::array<std::string_view, 4> kLauncherNames = {"auto", "local", "env", "mpi"};

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits "1.5M" into 1.5 and "M"; fails on an empty or malformed number.
Result<std::pair<double, std::string>> SplitNumber(std::string_view text, std::string_view what) {
  std::string_view s = Trim(text);
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  double value = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + i, value);
  if (i == 0 || ec != std::errc() || end != s.data() + i)
    return Error(fmt::format("invalid {} '{}': expected a number with an optional unit", what,
                             text));
  return std::make_pair(value, Lower(Trim(s.substr(i))));
}

}  // namespace

const DataTypeInfo& Info(DataType type) {
  size_t i = static_cast<size_t>(type);
  return kTypes[i < kTypes.size() ? i : static_cast<size_t>(DataType::kFloat)];
}

std::optional<DataType> DataTypeFromName(std::string_view name) {
  std::string s = Lower(name);
  if (s.rfind("nccl", 0) == 0) s = s.substr(4);
  for (const DataTypeInfo& t : kTypes)
    if (t.name == s) return t.type;
  for (const Alias& a : kTypeAliases)
    if (a.name == s) return a.type;
  return std::nullopt;
}

std::string_view RedOpName(RedOp op) {
  size_t i = static_cast<size_t>(op);
  return i < kOpNames.size() ? kOpNames[i] : "none";
}

std::optional<RedOp> RedOpFromName(std::string_view name) {
  std::string s = Lower(name);
  for (size_t i = 0; i < kOpNames.size(); ++i)
    if (kOpNames[i] == s) return static_cast<RedOp>(i);
  return std::nullopt;
}

std::string_view LauncherName(Launcher launcher) {
  return kLauncherNames[static_cast<size_t>(launcher)];
}

std::optional<Launcher> LauncherFromName(std::string_view name) {
  std::string s = Lower(name);
  for (size_t i = 0; i < kLauncherNames.size(); ++i)
    if (kLauncherNames[i] == s) return static_cast<Launcher>(i);
  return std::nullopt;
}

Result<int64_t> ParseByteSize(std::string_view text) {
  COMMLENS_ASSIGN_OR_RETURN(auto parts, SplitNumber(text, "size"));
  auto [value, unit] = parts;
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();
  double scale = 1;
  if (unit == "k") {
    scale = 1024.0;
  } else if (unit == "m") {
    scale = 1024.0 * 1024;
  } else if (unit == "g") {
    scale = 1024.0 * 1024 * 1024;
  } else if (!unit.empty()) {
    return Error(fmt::format("invalid size '{}': unit must be K, M or G (powers of 1024)", text));
  }
  double bytes = value * scale;
  if (bytes > 9.0e18) return Error(fmt::format("invalid size '{}': too large", text));
  if (bytes != std::floor(bytes))
    return Error(fmt::format("invalid size '{}': not a whole number of bytes", text));
  return static_cast<int64_t>(bytes);
}

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  COMMLENS_ASSIGN_OR_RETURN(auto parts, SplitNumber(text, "duration"));
  auto [value, unit] = parts;
  double ms = 0;
  if (unit.empty() || unit == "s") {
    ms = value * 1e3;
  } else if (unit == "ms") {
    ms = value;
  } else if (unit == "m" || unit == "min") {
    ms = value * 60e3;
  } else if (unit == "h") {
    ms = value * 3600e3;
  } else {
    return Error(fmt::format("invalid duration '{}': unit must be ms, s, m or h", text));
  }
  return std::chrono::milliseconds(static_cast<int64_t>(std::llround(ms)));
}

std::string FormatBytes(int64_t bytes) {
  static constexpr std::string_view kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  size_t u = 0;
  while (v >= 1024.0 && u + 1 < std::size(kUnits)) {
    v /= 1024.0;
    ++u;
  }
  if (v == std::floor(v)) return fmt::format("{} {}", static_cast<int64_t>(v), kUnits[u]);
  return fmt::format("{:.3g} {}", v, kUnits[u]);
}

std::vector<int64_t> SizeSweep(int64_t min_bytes, int64_t max_bytes, int step_factor,
                               int64_t step_bytes) {
  std::vector<int64_t> sizes;
  if (min_bytes < 0 || max_bytes < min_bytes) return sizes;
  bool multiply = step_factor > 1;
  if (!multiply && step_bytes <= 0) return {min_bytes};
  if (multiply && min_bytes == 0) return {0};  // 0 * factor never grows
  for (int64_t s = min_bytes; s <= max_bytes;) {
    sizes.push_back(s);
    int64_t next = multiply ? s * step_factor : s + step_bytes;
    if (next <= s) break;  // overflow guard
    s = next;
  }
  return sizes;
}

std::vector<int64_t> SizeSweep(const BenchConfig& config) {
  return SizeSweep(config.min_bytes, config.max_bytes, config.step_factor, config.step_bytes);
}

Status Validate(const BenchConfig& c) {
  if (c.collectives.empty()) return Error("no collective to run");
  if (c.backends.empty()) return Error("no backend to run");
  const bool device_backend = c.backends != std::vector<Backend>{Backend::kNccl};
  if (device_backend && c.collectives != std::vector<model::CommOp>{model::CommOp::kAllToAll})
    return Error("--backend other than nccl runs alltoall only (the device API and NVSHMEM "
                 "backends implement all-to-all); name alltoall alone");
  if (device_backend && c.gpus_per_process > 1)
    return Error("--backend nccl-device and nvshmem drive one GPU per process; start one "
                 "process per GPU (torchrun, mpirun, srun) instead of -g");
  if (c.min_bytes < 0) return Error("-b/--minbytes must be >= 0");
  if (c.max_bytes < c.min_bytes)
    return Error(fmt::format("-e/--maxbytes ({}) is smaller than -b/--minbytes ({})",
                             c.max_bytes, c.min_bytes));
  if (c.step_factor < 1) return Error("-f/--stepfactor must be >= 1");
  if (c.step_factor == 1 && c.step_bytes <= 0) return Error("-i/--stepbytes must be > 0");
  if (c.gpus_per_process < 0) return Error("-g/--ngpus must be >= 1");
  if (c.iters < 1) return Error("-n/--iters must be >= 1");
  if (c.ctas < 1 || c.ctas > 1024) return Error("--ctas must be in [1, 1024]");
  if (c.warmup < 0) return Error("-w/--warmup must be >= 0");
  if (c.spin_up.count() < 0) return Error("--spin-up must be >= 0");
  if (c.root < 0) return Error("-r/--root must be >= 0");
  if (c.timeout.count() <= 0) return Error("--timeout must be positive");
  if (c.port < 0 || c.port > 65535) return Error("--port must be in [0, 65535]");
  return OkStatus();
}

}  // namespace commlens::bench
