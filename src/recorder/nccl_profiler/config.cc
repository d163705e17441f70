#include "recorder/nccl_profiler/config.h"

#include <cerrno>
#include <cstdlib>
#include <string_view>

#include "common/strings.h"

namespace commlens::recorder {

namespace {

bool ParseUnsigned(const char* text, uint64_t* out) {
  if (text == nullptr || *text == '\0') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 0);
  if (errno != 0 || *end != '\0' || text[0] == '-') return false;
  *out = v;
  return true;
}

bool ParseSeconds(const char* text, double* out) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  double v = std::strtod(text, &end);
  if (*end != '\0' || !(v >= 0)) return false;
  *out = v;
  return true;
}

// Reads an unsigned variable into |*field| when set, clamped to [lo, hi].
template <typename T>
void ReadUnsigned(const EnvLookup& env, const char* name, uint64_t lo, uint64_t hi, T* field,
                  RecorderConfig* cfg) {
  const char* text = env(name);
  if (text == nullptr) return;
  uint64_t v = 0;
  if (!ParseUnsigned(text, &v)) {
    cfg->warnings.push_back(std::string(name) + "=" + text + " is not a number; ignored");
    return;
  }
  if (v < lo || v > hi) {
    cfg->warnings.push_back(std::string(name) + "=" + text + " is out of range [" +
                            std::to_string(lo) + ", " + std::to_string(hi) + "]; clamped");
    v = v < lo ? lo : hi;
  }
  *field = static_cast<T>(v);
}

void ReadSeconds(const EnvLookup& env, const char* name, double* field, RecorderConfig* cfg) {
  const char* text = env(name);
  if (text == nullptr) return;
  if (!ParseSeconds(text, field))
    cfg->warnings.push_back(std::string(name) + "=" + text + " is not a duration in seconds; ignored");
}

}  // namespace

bool ParseEventMask(const std::string& text, uint32_t* mask) {
  uint64_t number = 0;
  if (ParseUnsigned(text.c_str(), &number)) {
    *mask = static_cast<uint32_t>(number);
    return true;
  }
  static constexpr NamedBits kWords[] = {
      {"coll", EventBit(EventKind::kColl)},
      {"p2p", EventBit(EventKind::kP2p)},
      {"kernel", EventBit(EventKind::kKernelCh)},
      {"phases", EventBit(EventKind::kKernelPhase) | EventBit(EventKind::kKernelCh)},
      {"proxy", EventBit(EventKind::kProxyOp)},
      {"step", EventBit(EventKind::kProxyStep) | EventBit(EventKind::kProxyOp)},
      {"api", EventBit(EventKind::kGroupApi) | EventBit(EventKind::kCollApi) |
                  EventBit(EventKind::kP2pApi)},
      {"launch", EventBit(EventKind::kKernelLaunch)},
      {"ce", EventBit(EventKind::kCeColl)},
      {"default", kDefaultEventMask},
  };
  uint32_t bits = 0;
  if (!ParseNamedBits(text, kWords, &bits)) return false;
  *mask = bits;
  return true;
}

RecorderConfig ParseConfig(const EnvLookup& env) {
  RecorderConfig cfg;
  if (const char* out = env("COMMLENS_OUT"); out != nullptr && *out != '\0') cfg.out = out;
  ReadUnsigned(env, "COMMLENS_FLUSH_INTERVAL_MS", 1, 3'600'000, &cfg.flush_interval_ms, &cfg);
  ReadUnsigned(env, "COMMLENS_BUFFER_EVENTS", 1, 1u << 16, &cfg.buffer_events, &cfg);
  ReadUnsigned(env, "COMMLENS_KERNEL_SAMPLE", 1, 1u << 20, &cfg.kernel_sample, &cfg);
  ReadUnsigned(env, "COMMLENS_CAPTURE_AFTER_COLLS", 0, UINT64_MAX, &cfg.capture_after_colls, &cfg);
  ReadSeconds(env, "COMMLENS_CAPTURE_AFTER_S", &cfg.capture_after_s, &cfg);
  ReadSeconds(env, "COMMLENS_CAPTURE_DURATION_S", &cfg.capture_duration_s, &cfg);
  if (const char* mask = env("COMMLENS_EVENT_MASK"); mask != nullptr) {
    if (!ParseEventMask(mask, &cfg.event_mask))
      cfg.warnings.push_back(std::string("COMMLENS_EVENT_MASK=") + mask +
                             " has an unknown word; using the default mask");
  }
  if (const char* ctl = env("COMMLENS_CONTROL"); ctl != nullptr) cfg.control_path = ctl;
  ReadUnsigned(env, "COMMLENS_CONTROL_POLL_MS", 1, 60'000, &cfg.control_poll_ms, &cfg);
  if (const char* s = env("COMMLENS_FSYNC"); s != nullptr) cfg.fsync = std::string_view(s) == "1";
  if (const char* s = env("COMMLENS_CUPTI"); s != nullptr) cfg.cupti = std::string_view(s) == "1";
  if (const char* s = env("COMMLENS_CUPTI_LIBRARY"); s != nullptr) cfg.cupti_library = s;
  if (const char* s = env("COMMLENS_CUPTI_KINDS"); s != nullptr && !cupti::ParseCuptiKinds(s, &cfg.cupti_kinds))
    cfg.warnings.push_back(std::string("COMMLENS_CUPTI_KINDS=") + s + " has an unknown word; using the default kinds");
  if (const char* s = env("COMMLENS_LAUNCH_TIMING"); s != nullptr) {
    const std::string_view v = s;
    if (v == "events" || v == "off") cfg.launch_timing = v == "events";
    else cfg.warnings.push_back(std::string("COMMLENS_LAUNCH_TIMING=") + s + " is neither events nor off; timing launches");
  }
  if (const char* s = env("COMMLENS_CUDA_DRIVER"); s != nullptr) cfg.cuda_driver = s;
  cfg.kernel_events_replaced = env("COMMLENS_EVENT_MASK") == nullptr;

  // Who this process is: the same rules as `commlens record` (common/launch_env.h).
  launch_env::LaunchEnv who = launch_env::DetectLaunchEnv(env);
  if (!who.single_process()) {
    cfg.global_rank = who.rank;
    cfg.world_size = who.world_size > 0 ? who.world_size : 0;
    cfg.local_rank = who.local_rank;
  }
  cfg.job_id = who.job_id;
  for (std::string& w : who.warnings) cfg.warnings.push_back(std::move(w));
  return cfg;
}

}  // namespace commlens::recorder
