#include "bench/bench_json.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/collective_table.h"
#include "bench/run_json.h"
#include "common/file.h"
#include "common/json_writer.h"

namespace commlens::bench {

namespace {

using nlohmann::json;

json PlacementToJson(const PlacementResult& p) {
  return {{"time_us", p.time_us}, {"algbw_gbps", p.algbw_gbps}, {"busbw_gbps", p.busbw_gbps},
          {"wrong", p.wrong ? json(*p.wrong) : json(nullptr)},
          {"p50_us", p.p50_us}, {"p99_us", p.p99_us}, {"min_us", p.min_us}, {"max_us", p.max_us}};
}

json BackendNames(const std::vector<Backend>& backends) {
  json names = json::array();
  for (Backend b : backends) names.push_back(BackendName(b));
  return names;
}

json ConfigToJson(const BenchConfig& c) {
  json names = json::array();
  for (model::CommOp op : c.collectives) {
    const CollectiveSpec* spec = FindCollective(op);
    names.push_back(spec ? spec->name : model::CommOpName(op));
  }
  return {{"collectives", names},          {"min_bytes", c.min_bytes},
          {"max_bytes", c.max_bytes},      {"step_factor", c.step_factor},
          {"step_bytes", c.step_bytes},    {"gpus_per_process", c.gpus_per_process},
          {"dtype", Info(c.dtype).name},   {"op", RedOpName(c.op)},
          {"root", c.root},                {"iters", c.iters},
          {"warmup", c.warmup},            {"spin_up_s", c.spin_up.count() / 1000.0},
          {"check", c.check},
          {"graph", c.graph},              {"timeout_s", c.timeout.count() / 1000.0},
          {"launcher", LauncherName(c.launcher)}, {"port", c.port},
          {"json_path", c.json_path}, {"backends", BackendNames(c.backends)}};
}

}  // namespace

json RunToJson(const RunInfo& r) {
  json gpus = json::array();
  for (const GpuInfo& g : r.gpus) {
    gpus.push_back({{"rank", g.rank}, {"host", g.host}, {"device", g.device}, {"name", g.name},
                    {"pci_bus_id", g.pci_bus_id}, {"memory_bytes", g.memory_bytes},
                    {"compute_capability", fmt::format("{}.{}", g.cc_major, g.cc_minor)}});
  }
  return {{"start_time", r.start_time},
          {"end_time", r.end_time},
          {"machine", {{"hosts", r.hosts}, {"launcher", r.launcher}, {"nprocs", r.nprocs},
                       {"gpus_per_process", r.gpus_per_process}, {"nranks", r.nranks}}},
          {"nccl", {{"version", r.nccl_version}, {"version_code", r.nccl_version_code}}},
          {"cuda", {{"runtime_version", r.cuda_runtime_version},
                    {"driver_version", r.cuda_driver_version}}},
          {"gpus", gpus}};
}

json BenchFileHeader(const RunInfo& run, std::string_view schema, int version, json units) {
  json root = RunToJson(run);
  root["schema"] = schema;
  root["schema_version"] = version;
  root["tool"] = {{"name", "commlens"}, {"version", run.tool_version}};
  root["units"] = std::move(units);
  return root;
}

namespace {

json CollectiveToJson(const CollectiveResult& c) {
  json rows = json::array();
  for (const SizeResult& r : c.rows) {
    rows.push_back({{"size_bytes", r.size_bytes}, {"count", r.count},
                    {"send_bytes", r.send_bytes}, {"recv_bytes", r.recv_bytes},
                    {"out_of_place", PlacementToJson(r.out_of_place)},
                    {"in_place", PlacementToJson(r.in_place)}});
  }
  const CollectiveSummary& s = c.summary;
  return {{"name", c.name}, {"comm_op", c.comm_op}, {"dtype", c.dtype}, {"redop", c.redop},
          {"root", c.root}, {"busbw_factor", c.busbw_factor}, {"backend", c.backend},
          {"in_place_measured", c.in_place}, {"results", rows},
          {"summary", {{"peak_busbw_gbps", s.peak_busbw_gbps}, {"peak_size", s.peak_size},
                       {"half_peak_size", s.half_peak_size},
                       {"small_latency_us", s.small_latency_us},
                       {"small_latency_p50_us", s.small_latency_p50_us},
                       {"small_size", s.small_size}, {"avg_busbw_gbps", s.avg_busbw_gbps},
                       {"wrong", s.wrong}}}};
}

// Typed field access that names the field in its error.
class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  template <typename T>
  T Get(const json& obj, const char* key, const std::string& where) {
    if (!ok()) return T{};
    auto it = obj.find(key);
    if (it == obj.end()) {
      Fail(fmt::format("missing field '{}{}'", where, key));
      return T{};
    }
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // nlohmann casts a float or an integer out of T's range without a check (a float
      // beyond it is undefined behaviour; found by bench_fuzzer): check here.
      bool fits = false;
      T value{};
      if (it->is_number_float()) {
        const double d = it->template get<double>();
        fits = d == std::trunc(d) && d >= static_cast<double>(std::numeric_limits<T>::min()) &&
               d < std::ldexp(1.0, std::numeric_limits<T>::digits);
        if (fits) value = static_cast<T>(d);
      } else if (it->is_number_unsigned()) {
        const uint64_t u = it->template get<uint64_t>();
        fits = u <= static_cast<uint64_t>(std::numeric_limits<T>::max());
        if (fits) value = static_cast<T>(u);
      } else if (it->is_number_integer()) {
        const int64_t v = it->template get<int64_t>();
        fits = std::in_range<T>(v);
        if (fits) value = static_cast<T>(v);
      } else {
        Fail(fmt::format("field '{}{}' has the wrong type", where, key));
        return T{};
      }
      if (!fits) Fail(fmt::format("field '{}{}' is out of range", where, key));
      return value;
    } else {
      try {
        return it->template get<T>();
      } catch (const json::exception&) {
        Fail(fmt::format("field '{}{}' has the wrong type", where, key));
        return T{};
      }
    }
  }
  const json& Object(const json& obj, const char* key, const std::string& where) {
    static const json kEmpty = json::object();
    if (!ok()) return kEmpty;
    auto it = obj.find(key);
    if (it == obj.end() || !(it->is_object() || it->is_array())) {
      Fail(fmt::format("missing object or array '{}{}'", where, key));
      return kEmpty;
    }
    return *it;
  }
  void Fail(std::string message) {
    if (ok()) error_ = fmt::format("{}: {}", source_, message);
  }
  bool ok() const { return error_.empty(); }
  Status status() const { return ok() ? OkStatus() : Error(error_); }

 private:
  std::string source_;
  std::string error_;
};

PlacementResult PlacementFromJson(Reader& rd, const json& j, const std::string& where) {
  PlacementResult p;
  p.time_us = rd.Get<double>(j, "time_us", where);
  p.algbw_gbps = rd.Get<double>(j, "algbw_gbps", where);
  p.busbw_gbps = rd.Get<double>(j, "busbw_gbps", where);
  if (j.contains("wrong") && !j["wrong"].is_null()) p.wrong = rd.Get<int64_t>(j, "wrong", where);
  p.p50_us = rd.Get<double>(j, "p50_us", where);
  p.p99_us = rd.Get<double>(j, "p99_us", where);
  p.min_us = rd.Get<double>(j, "min_us", where);
  p.max_us = rd.Get<double>(j, "max_us", where);
  return p;
}

BenchConfig ConfigFromJson(Reader& rd, const json& j) {
  const std::string w = "args.";
  BenchConfig c;
  c.collectives.clear();
  for (const auto& name : rd.Get<std::vector<std::string>>(j, "collectives", w)) {
    const CollectiveSpec* spec = FindCollective(name);
    if (!spec) rd.Fail(fmt::format("unknown collective '{}' in args.collectives", name));
    if (spec) c.collectives.push_back(spec->op);
  }
  c.min_bytes = rd.Get<int64_t>(j, "min_bytes", w);
  c.max_bytes = rd.Get<int64_t>(j, "max_bytes", w);
  c.step_factor = rd.Get<int>(j, "step_factor", w);
  c.step_bytes = rd.Get<int64_t>(j, "step_bytes", w);
  c.gpus_per_process = rd.Get<int>(j, "gpus_per_process", w);
  auto dtype = DataTypeFromName(rd.Get<std::string>(j, "dtype", w));
  auto op = RedOpFromName(rd.Get<std::string>(j, "op", w));
  auto launcher = LauncherFromName(rd.Get<std::string>(j, "launcher", w));
  if (rd.ok() && !(dtype && op && launcher)) rd.Fail("args.dtype, args.op or args.launcher unknown");
  c.dtype = dtype.value_or(DataType::kFloat);
  c.op = op.value_or(RedOp::kSum);
  c.launcher = launcher.value_or(Launcher::kAuto);
  c.root = rd.Get<int>(j, "root", w);
  c.iters = rd.Get<int>(j, "iters", w);
  c.warmup = rd.Get<int>(j, "warmup", w);
  // Documents written before --spin-up existed had none.
  c.spin_up = j.contains("spin_up_s") ? std::chrono::milliseconds(static_cast<int64_t>(
                                            std::llround(rd.Get<double>(j, "spin_up_s", w) * 1000)))
                                      : std::chrono::milliseconds(0);
  c.check = rd.Get<bool>(j, "check", w);
  c.graph = rd.Get<bool>(j, "graph", w);
  c.timeout = std::chrono::milliseconds(
      static_cast<int64_t>(std::llround(rd.Get<double>(j, "timeout_s", w) * 1000)));
  c.port = rd.Get<int>(j, "port", w);
  c.json_path = rd.Get<std::string>(j, "json_path", w);
  if (j.contains("backends")) {  // absent before --backend existed
    c.backends.clear();
    for (const auto& name : rd.Get<std::vector<std::string>>(j, "backends", w)) {
      std::optional<Backend> b = BackendFromName(name);
      if (!b) rd.Fail(fmt::format("unknown backend '{}' in args.backends", name));
      if (b) c.backends.push_back(*b);
    }
  }
  return c;
}

RunInfo RunFromJson(Reader& rd, const json& root) {
  RunInfo r;
  r.tool_version = rd.Get<std::string>(rd.Object(root, "tool", ""), "version", "tool.");
  r.start_time = rd.Get<std::string>(root, "start_time", "");
  r.end_time = rd.Get<std::string>(root, "end_time", "");
  const json& m = rd.Object(root, "machine", "");
  r.hosts = rd.Get<std::vector<std::string>>(m, "hosts", "machine.");
  r.launcher = rd.Get<std::string>(m, "launcher", "machine.");
  r.nprocs = rd.Get<int>(m, "nprocs", "machine.");
  r.gpus_per_process = rd.Get<int>(m, "gpus_per_process", "machine.");
  r.nranks = rd.Get<int>(m, "nranks", "machine.");
  const json& nccl = rd.Object(root, "nccl", "");
  r.nccl_version = rd.Get<std::string>(nccl, "version", "nccl.");
  r.nccl_version_code = rd.Get<int>(nccl, "version_code", "nccl.");
  const json& cuda = rd.Object(root, "cuda", "");
  r.cuda_runtime_version = rd.Get<int>(cuda, "runtime_version", "cuda.");
  r.cuda_driver_version = rd.Get<int>(cuda, "driver_version", "cuda.");
  for (const json& g : rd.Object(root, "gpus", "")) {
    GpuInfo info;
    info.rank = rd.Get<int>(g, "rank", "gpus[].");
    info.host = rd.Get<std::string>(g, "host", "gpus[].");
    info.device = rd.Get<int>(g, "device", "gpus[].");
    info.name = rd.Get<std::string>(g, "name", "gpus[].");
    info.pci_bus_id = rd.Get<std::string>(g, "pci_bus_id", "gpus[].");
    info.memory_bytes = rd.Get<int64_t>(g, "memory_bytes", "gpus[].");
    std::string cc = rd.Get<std::string>(g, "compute_capability", "gpus[].");
    if (std::sscanf(cc.c_str(), "%d.%d", &info.cc_major, &info.cc_minor) != 2 && rd.ok())
      rd.Fail(fmt::format("gpus[].compute_capability '{}' is not MAJOR.MINOR", cc));
    r.gpus.push_back(std::move(info));
  }
  return r;
}

CollectiveResult CollectiveFromJson(Reader& rd, const json& j) {
  CollectiveResult c;
  c.name = rd.Get<std::string>(j, "name", "collectives[].");
  const std::string w = fmt::format("collectives[{}].", c.name);
  c.comm_op = rd.Get<std::string>(j, "comm_op", w);
  c.dtype = rd.Get<std::string>(j, "dtype", w);
  c.redop = rd.Get<std::string>(j, "redop", w);
  c.root = rd.Get<int>(j, "root", w);
  c.busbw_factor = rd.Get<double>(j, "busbw_factor", w);
  // Documents written before --backend existed have neither field.
  if (j.contains("backend")) c.backend = rd.Get<std::string>(j, "backend", w);
  if (j.contains("in_place_measured")) c.in_place = rd.Get<bool>(j, "in_place_measured", w);
  for (const json& r : rd.Object(j, "results", w)) {
    SizeResult row;
    row.size_bytes = rd.Get<int64_t>(r, "size_bytes", w + "results[].");
    row.count = rd.Get<int64_t>(r, "count", w + "results[].");
    row.send_bytes = rd.Get<int64_t>(r, "send_bytes", w + "results[].");
    row.recv_bytes = rd.Get<int64_t>(r, "recv_bytes", w + "results[].");
    row.out_of_place = PlacementFromJson(rd, rd.Object(r, "out_of_place", w), w + "out_of_place.");
    row.in_place = PlacementFromJson(rd, rd.Object(r, "in_place", w), w + "in_place.");
    c.rows.push_back(row);
  }
  const json& s = rd.Object(j, "summary", w);
  const std::string ws = w + "summary.";
  c.summary.peak_busbw_gbps = rd.Get<double>(s, "peak_busbw_gbps", ws);
  c.summary.peak_size = rd.Get<int64_t>(s, "peak_size", ws);
  c.summary.half_peak_size = rd.Get<int64_t>(s, "half_peak_size", ws);
  c.summary.small_latency_us = rd.Get<double>(s, "small_latency_us", ws);
  c.summary.small_latency_p50_us = rd.Get<double>(s, "small_latency_p50_us", ws);
  c.summary.small_size = rd.Get<int64_t>(s, "small_size", ws);
  c.summary.avg_busbw_gbps = rd.Get<double>(s, "avg_busbw_gbps", ws);
  c.summary.wrong = rd.Get<int64_t>(s, "wrong", ws);
  return c;
}

}  // namespace

std::string BenchReportToJson(const BenchReport& report) {
  json collectives = json::array();
  for (const CollectiveResult& c : report.collectives) collectives.push_back(CollectiveToJson(c));
  json root = BenchFileHeader(report.run, kBenchSchema, kBenchSchemaVersion,
                              {{"size", "bytes"}, {"time", "microseconds"},
                               {"bandwidth", "GB/s (1e9 bytes per second)"}});
  root["timing"] = {
      {"time_us", "host wall clock over iters back-to-back enqueues / iters (nccl-tests)"},
      {"percentiles", "CUDA events per iteration, max over ranks, nearest rank"}};
  root["args"] = ConfigToJson(report.config);
  root["collectives"] = collectives;
  root["wrong_total"] = report.WrongTotal();
  root["ok"] = report.WrongTotal() == 0;
  return JsonText(root, 2) + "\n";
}

Result<BenchReport> ParseBenchReport(std::string_view text, std::string_view source) {
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object())
    return Error(fmt::format("{}: not a JSON object", source));
  Reader rd(source);
  std::string schema = rd.Get<std::string>(root, "schema", "");
  int version = rd.Get<int>(root, "schema_version", "");
  if (rd.ok() && schema != kBenchSchema)
    return Error(fmt::format("{}: schema '{}' is not '{}'", source, schema, kBenchSchema));
  if (rd.ok() && version != kBenchSchemaVersion)
    return Error(fmt::format("{}: schema_version {} is not supported (this build reads {})",
                             source, version, kBenchSchemaVersion));
  BenchReport report;
  report.run = RunFromJson(rd, root);
  report.config = ConfigFromJson(rd, rd.Object(root, "args", ""));
  for (const json& c : rd.Object(root, "collectives", ""))
    report.collectives.push_back(CollectiveFromJson(rd, c));
  COMMLENS_RETURN_IF_ERROR(rd.status());
  return report;
}

Status WriteBenchReport(const BenchReport& report, const std::string& path) {
  return WriteWholeFile(path, BenchReportToJson(report));
}

Result<BenchReport> ReadBenchReport(const std::string& path) {
  COMMLENS_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path));
  return ParseBenchReport(text, path);
}

}  // namespace commlens::bench
