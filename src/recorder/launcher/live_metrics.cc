#include "recorder/launcher/live_metrics.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <vector>

#include "model/counter_rates.h"
#include "recorder/launcher/output_names.h"
#include "recorder/launcher/rank_progress.h"

namespace commlens::recorder::launcher {

namespace {

namespace nf = native_format;

// A series stops being reported when its newest sample is this much older than the
// newest sample of the file (its device went away).
constexpr int64_t kStaleNs = 3'000'000'000;

struct Family {
  const char* name;
  const char* help;
  std::vector<std::string> samples;  // "{labels} value"
};

enum FamilyIndex {
  kNicTx,
  kNicRx,
  kGpuUtil,
  kGpuMemUtil,
  kGpuPower,
  kNvlinkTx,
  kNvlinkRx,
  kLastSample,
  kCollectiveAge,
  kFamilies
};

std::vector<Family> EmptyFamilies() {
  return {
      {"commlens_nic_transmit_bytes_per_second",
       "Bytes per second a NIC port sent, over the last second of samples.",
       {}},
      {"commlens_nic_receive_bytes_per_second",
       "Bytes per second a NIC port received, over the last second of samples.",
       {}},
      {"commlens_gpu_utilization_ratio",
       "Share of NVML's sample period in which a kernel ran on the GPU (0 to 1).",
       {}},
      {"commlens_gpu_memory_utilization_ratio",
       "Share of NVML's sample period in which GPU memory was read or written.",
       {}},
      {"commlens_gpu_power_watts", "GPU power draw.", {}},
      {"commlens_gpu_nvlink_transmit_bytes_per_second",
       "Bytes per second the GPU sent over all its NVLinks.",
       {}},
      {"commlens_gpu_nvlink_receive_bytes_per_second",
       "Bytes per second the GPU received over all its NVLinks.",
       {}},
      {"commlens_sampler_last_sample_timestamp_seconds",
       "Unix time of the sampler's newest sample.",
       {}},
      {"commlens_last_collective_age_seconds",
       "Seconds since the rank's collectives last progressed (an op started, or a kernel or network "
       "transfer of one ended), as of the plugin's last flush; an op that never ends counts from its "
       "start.",
       {}},
  };
}

// Plain decimals, at most three places: "1000000", "0.55", "7.25".
std::string Number(double v) {
  std::string s = fmt::format("{:.3f}", v);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

// Bytes (or base units) per second over the series' samples; false when there is no interval.
bool RateOf(const SamplesTail::Series& s, double* rate) {
  model::CounterRates r = model::RatesOf(SamplesTail::AsCounterSeries(s));
  double seconds = 0;
  for (size_t i = 0; i < r.size(); ++i) seconds += static_cast<double>(r.end[i] - r.start[i]) / 1e9;
  if (seconds <= 0) return false;
  *rate = r.total / seconds;
  return true;
}

std::string_view After(std::string_view name, char sep) {
  size_t at = name.find(sep);
  return at == std::string_view::npos ? name : name.substr(at + 1);
}

std::string_view Before(std::string_view name, char sep) { return name.substr(0, name.find(sep)); }

int64_t MtimeNs(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return -1;
  return int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
}

int64_t RealtimeNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string PrometheusLabel(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + "." + std::to_string(getpid()) + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error(path + ": cannot create " + tmp + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int error = n < 0 ? errno : EIO;
      close(fd);
      unlink(tmp.c_str());
      return Error(tmp + ": " + std::strerror(error));
    }
    done += static_cast<size_t>(n);
  }
  if (close(fd) != 0 || rename(tmp.c_str(), path.c_str()) != 0) {
    int error = errno;
    unlink(tmp.c_str());
    return Error(path + ": " + std::strerror(error));
  }
  return OkStatus();
}

LiveMetrics::LiveMetrics(LiveMetricsOptions options)
    : options_(std::move(options)), tail_(options_.samples_path, options_.rate_window_ns) {}

LiveMetrics::~LiveMetrics() { Stop(); }

std::string LiveMetrics::Render(int64_t now_ns) {
  std::vector<Family> families = EmptyFamilies();
  const std::string common = "job=\"" + PrometheusLabel(options_.job_id) + "\",host=\"" +
                             PrometheusLabel(options_.host) + "\"";

  if (!options_.samples_path.empty()) {
    (void)tail_.Poll();  // a damaged or foreign file only means no sampler metrics
    const int64_t newest = tail_.last_sample_ns();
    for (const auto& [id, s] : tail_.series()) {
      if (s.samples.empty() || s.samples.back().first < newest - kStaleNs) continue;
      const std::string_view file = After(s.name, '.');
      const double last = s.samples.back().second;
      double rate = 0;
      if (s.kind == nf::DeviceKind::kGpu) {
        const std::string labels = "{" + common + ",gpu=\"" + PrometheusLabel(s.device) + "\"} ";
        if (file == "utilization")
          families[kGpuUtil].samples.push_back(labels + Number(last / 100.0));
        else if (file == "memory_utilization")
          families[kGpuMemUtil].samples.push_back(labels + Number(last / 100.0));
        else if (file == "power" && s.unit == "mW")
          families[kGpuPower].samples.push_back(labels + Number(last / 1000.0));
        else if (file == "nvlink_tx" && RateOf(s, &rate))
          families[kNvlinkTx].samples.push_back(labels + Number(rate));
        else if (file == "nvlink_rx" && RateOf(s, &rate))
          families[kNvlinkRx].samples.push_back(labels + Number(rate));
        continue;
      }
      int family = file == "tx_bytes" || file == "port_xmit_data"  ? kNicTx
                   : file == "rx_bytes" || file == "port_rcv_data" ? kNicRx
                                                                   : -1;
      if (family < 0 || !RateOf(s, &rate)) continue;
      families[family].samples.push_back("{" + common + ",device=\"" + PrometheusLabel(s.device) +
                                         "\",kind=\"" + PrometheusLabel(Before(s.name, '.')) +
                                         "\"} " + Number(rate));
    }
    if (newest > 0)
      families[kLastSample].samples.push_back("{" + common + "} " + Number(newest / 1e9));
  }

  if (!options_.trace_dir.empty()) {
    for (const auto& [rank, last_progress] : LastProgressByRank()) {
      double age = std::max<int64_t>(0, now_ns - last_progress) / 1e9;
      families[kCollectiveAge].samples.push_back("{" + common + ",rank=\"" + std::to_string(rank) +
                                                 "\"} " + Number(age));
    }
  }

  std::string out;
  for (const Family& f : families) {
    if (f.samples.empty()) continue;
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f.name, f.help, f.name);
    for (const std::string& s : f.samples) out += f.name + s + "\n";
  }
  return out;
}

std::map<int, int64_t> LiveMetrics::LastProgressByRank() {
  // A rank's current file is its newest: a later session of the process, or a restarted
  // process, writes a new one. With the CUPTI tracer a process with no communicator (a
  // helper that inherited the rank's variables, or the rank itself before NCCL's first
  // init or after its last finalize) writes alive marks without progress: its file says
  // nothing of the rank's collectives, and the next newest does.
  std::map<int, std::vector<std::pair<int64_t, std::string>>> files_by_rank;  // (mtime, path)
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(options_.trace_dir, ec)) {
    int rank = -1;
    if (!MatchPluginTrace(entry.path().filename().string(), options_.job_id, options_.host, &rank))
      continue;
    int64_t mtime = MtimeNs(entry.path().string());
    // Coarse file system clocks: allow two seconds before the start.
    if (mtime < options_.start_realtime_ns - 2'000'000'000) continue;
    files_by_rank[rank].emplace_back(mtime, entry.path().string());
  }
  std::map<int, int64_t> out;
  for (auto& [rank, files] : files_by_rank) {
    std::sort(files.begin(), files.end(), std::greater<>());
    for (const auto& [mtime, path] : files) {
      const TraceEnd end = ReadTraceEnd(path);
      if (end.kind == TraceEnd::Kind::kNoCollectives) {
        last_progress_.erase(path);
        continue;
      }
      if (end.kind == TraceEnd::Kind::kAlive) last_progress_[path] = end.last_progress_ns;
      if (end.kind == TraceEnd::Kind::kEnded) break;  // its NCCL session is over: nothing to wait for
      // Between two alive marks (a write under way) the last one read still holds.
      auto known = last_progress_.find(path);
      if (known != last_progress_.end()) out[rank] = known->second;
      break;
    }
  }
  return out;
}

Status LiveMetrics::Update(int64_t now_ns) {
  return WriteFileAtomically(options_.textfile, Render(now_ns));
}

void LiveMetrics::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void LiveMetrics::Stop() {
  {
    std::lock_guard<std::mutex> g(mu_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) {
    thread_.join();
    unlink(options_.textfile.c_str());  // a job that ended exports nothing
  }
}

std::string LiveMetrics::first_error() const {
  std::lock_guard<std::mutex> g(mu_);
  return first_error_;
}

void LiveMetrics::Loop() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    lk.unlock();
    Status s = Update(RealtimeNs());
    lk.lock();
    if (!s.ok() && first_error_.empty()) first_error_ = s.message();
    if (cv_.wait_for(lk, std::chrono::milliseconds(options_.interval_ms), [this] { return stop_; }))
      return;
  }
}

}  // namespace commlens::recorder::launcher
