#include "cli/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace commlens::cli {

namespace {

std::string Size(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.1f} GB", bytes / 1e9);
  return fmt::format("{:.0f} MB", bytes / 1e6);
}

}  // namespace

std::string ProgressLine::Render(uint64_t files_done, uint64_t files_total, uint64_t bytes_read, uint64_t bytes_total,
                                 double seconds) {
  constexpr int kWidth = 24;
  const double done = bytes_total > 0 ? std::min(1.0, static_cast<double>(bytes_read) / bytes_total) : 0.0;
  const int filled = static_cast<int>(done * kWidth);
  std::string bar = std::string(filled, '#') + std::string(kWidth - filled, '.');
  const double rate = seconds > 0 ? bytes_read / seconds : 0;
  std::string left = rate > 0 && bytes_total > bytes_read
                         ? fmt::format(", {:.0f} s left", (static_cast<double>(bytes_total) - bytes_read) / rate)
                         : "";
  return fmt::format("loading [{}] {}/{} files, {} of {}, {}/s{}", bar, files_done, files_total,
                     Size(static_cast<double>(std::min(bytes_read, bytes_total))), Size(static_cast<double>(bytes_total)),
                     Size(rate), left);
}

ProgressLine::ProgressLine(const importers::LoadProgress* progress, bool quiet) : progress_(progress) {
  if (quiet || !isatty(STDERR_FILENO)) return;
  thread_ = std::thread([this] { Run(); });
}

ProgressLine::~ProgressLine() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
  std::fputs("\r\033[K", stderr);  // erase the line
  std::fflush(stderr);
}

void ProgressLine::Run() {
  const auto t0 = std::chrono::steady_clock::now();
  std::unique_lock<std::mutex> lock(mu_);
  // Quick loads finish before the first draw: no flicker.
  while (!wake_.wait_for(lock, std::chrono::milliseconds(200), [this] { return stop_; })) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const std::string line = Render(progress_->files_done, progress_->files_total, progress_->bytes_read,
                                    progress_->bytes_total, s);
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
  }
}

}  // namespace commlens::cli
