#include "recorder/nccl_profiler/serializer.h"

#include <algorithm>
#include <cstring>

#include "recorder/nccl_profiler/clock.h"

namespace commlens::recorder {

namespace nf = native_format;

namespace {

// NCCL's names are short literals; a longer read would mean a pointer we misjudged.
constexpr size_t kMaxNameLength = 256;

int KindIndex(nf::EventKind k) { return static_cast<int>(k); }

nf::EventKind EventKindOf(nf::OpKind k) {
  switch (k) {
    case nf::OpKind::kP2p: return nf::EventKind::kP2p;
    case nf::OpKind::kCeColl: return nf::EventKind::kCeColl;
    default: return nf::EventKind::kColl;
  }
}

nf::EventKind EventKindOf(nf::ApiKind k) {
  switch (k) {
    case nf::ApiKind::kGroupApi: return nf::EventKind::kGroupApi;
    case nf::ApiKind::kP2pApi: return nf::EventKind::kP2pApi;
    case nf::ApiKind::kKernelLaunch: return nf::EventKind::kKernelLaunch;
    default: return nf::EventKind::kCollApi;
  }
}

}  // namespace

uint32_t Serializer::InternText(std::string_view text, nf::RecordWriter& strings) {
  if (text.empty()) return 0;
  auto [it, inserted] = by_text_.try_emplace(std::string(text), next_id_);
  if (inserted) {
    strings.AppendString(next_id_, text);
    ++next_id_;
  }
  return it->second;
}

uint32_t Serializer::InternPointer(const char* s, nf::RecordWriter& strings) {
  if (s == nullptr) return 0;
  auto it = by_pointer_.find(s);
  if (it != by_pointer_.end()) return it->second;
  uint32_t id = InternText(std::string_view(s, strnlen(s, kMaxNameLength)), strings);
  by_pointer_.emplace(s, id);
  return id;
}

void Serializer::SerializeContext(Context& ctx, uint64_t seq_gaps, bool final,
                                  nf::RecordWriter& strings, nf::RecordWriter& body) {
  if (!ctx.comm_written) {
    nf::CommRecord c{};
    c.comm_hash = ctx.hash();
    c.init_realtime_ns = ctx.init_ns();
    c.comm = ctx.file_id();
    c.name = InternText(ctx.name(), strings);
    c.rank = ctx.rank();
    c.nranks = ctx.nranks();
    c.nnodes = ctx.nnodes();
    c.abi_version = static_cast<uint32_t>(ctx.abi_version());
    body.Append(nf::RecordType::kComm, c);
    ctx.comm_written = true;
  }
  WriteOps(ctx, strings, body);
  WriteKernelTimings(ctx, body);
  WriteProxyOps(ctx, body);
  WriteApis(ctx, strings, body);
  WriteStats(ctx, seq_gaps, final, body);
}

void Serializer::WriteOps(Context& ctx, nf::RecordWriter& strings, nf::RecordWriter& body) {
  ctx.ops.DrainDone([&](const OpData& d) {
    nf::OpRecord r{};
    r.op_id = d.op_id;
    r.api_id = d.api_id;
    r.count = d.count;
    r.nccl_seq = d.nccl_seq;
    r.comm_seq = d.comm_seq;
    r.host_start_ns = d.host_start_ns;
    r.host_stop_ns = d.host_stop_ns;
    r.comm = ctx.file_id();
    r.func = InternPointer(d.func, strings);
    r.dtype = InternPointer(d.dtype, strings);
    r.algo = InternPointer(d.algo, strings);
    r.proto = InternPointer(d.proto, strings);
    r.root_or_peer = d.root_or_peer;
    r.kind = static_cast<uint8_t>(d.kind);
    r.channels = d.channels;
    r.warps = d.warps;
    r.flags = d.flags;
    body.Append(nf::RecordType::kOp, r);
    if (d.user_tag != 0 || d.kernel_variant != nullptr) {  // ABI v7's additions
      nf::OpDetailRecord detail{};
      detail.op_id = d.op_id;
      detail.user_tag = d.user_tag;
      detail.kernel_variant = InternPointer(d.kernel_variant, strings);
      body.Append(nf::RecordType::kOpDetail, detail);
    }
    ++ctx.recorded[KindIndex(EventKindOf(d.kind))];
  });
}

// Channels of one op are merged into one record: earliest start, latest stop, and the
// smallest (host observation - GPU timestamp) as the clock-offset bound. Their barrier
// phases (ABI v7), where any started, into a KernelPhase record the same way, with the
// channels' lengths summed.
void Serializer::WriteKernelTimings(Context& ctx, nf::RecordWriter& body) {
  kernel_scratch_.clear();
  uint64_t n = ctx.kernels.DrainDone([&](const KernelData& d) { kernel_scratch_.push_back(d); });
  ctx.recorded[KindIndex(nf::EventKind::kKernelCh)] += n;
  std::sort(kernel_scratch_.begin(), kernel_scratch_.end(),
            [](const KernelData& a, const KernelData& b) { return a.op_id < b.op_id; });
  for (size_t i = 0; i < kernel_scratch_.size();) {
    nf::KernelTimingRecord r{};
    r.op_id = kernel_scratch_[i].op_id;
    r.gpu_start = UINT64_MAX;
    r.clock_offset_upper = INT64_MAX;
    nf::KernelPhaseRecord phases{};
    phases.op_id = r.op_id;
    bool any_phase = false;
    for (; i < kernel_scratch_.size() && kernel_scratch_[i].op_id == r.op_id; ++i) {
      const KernelData& k = kernel_scratch_[i];
      for (int p = 0; p < nf::kKernelPhases; ++p) {
        if (k.phase_start[p] == 0) continue;
        any_phase = true;
        if (phases.first_start[p] == 0 || k.phase_start[p] < phases.first_start[p]) phases.first_start[p] = k.phase_start[p];
        if (k.phase_stop[p] == 0) continue;
        if (k.phase_stop[p] < k.phase_start[p]) {
          phases.flags |= nf::kTimingFlagBadTimer;
          continue;
        }
        phases.last_stop[p] = std::max(phases.last_stop[p], k.phase_stop[p]);
        phases.total_ns[p] += k.phase_stop[p] - k.phase_start[p];
        ++phases.channels[p];
      }
      ++r.channels;
      r.gpu_start = std::min(r.gpu_start, k.start_ptimer);
      r.clock_offset_upper = std::min(r.clock_offset_upper,
                                      k.start_obs_ns - static_cast<int64_t>(k.start_ptimer));
      if (k.stop_ptimer == 0) continue;  // stopped without a KernelChStop state
      if (k.stop_ptimer < k.start_ptimer) r.flags |= nf::kTimingFlagBadTimer;
      r.gpu_stop = std::max(r.gpu_stop, k.stop_ptimer);
      r.clock_offset_upper = std::min(r.clock_offset_upper,
                                      k.stop_obs_ns - static_cast<int64_t>(k.stop_ptimer));
    }
    body.Append(nf::RecordType::kKernelTiming, r);
    if (any_phase) body.Append(nf::RecordType::kKernelPhase, phases);
  }
}

void Serializer::WriteProxyOps(Context& ctx, nf::RecordWriter& body) {
  uint64_t n = ctx.proxy_ops.DrainDone([&](const ProxyOpData& d) {
    nf::ProxyOpRecord r{};
    r.op_id = d.op_id;
    r.host_start_ns = d.host_start_ns;
    r.host_stop_ns = d.host_stop_ns;
    r.first_step_start_ns = d.first_step_start_ns;
    r.last_step_stop_ns = d.last_step_stop_ns;
    r.bytes = d.bytes;
    r.net_wait_ns = d.wait_ns[static_cast<int>(WaitKind::kNet)];
    r.gpu_wait_ns = d.wait_ns[static_cast<int>(WaitKind::kGpu)];
    r.peer_wait_ns = d.wait_ns[static_cast<int>(WaitKind::kPeer)];
    r.comm = ctx.file_id();
    r.peer = d.peer;
    r.steps = d.steps;
    r.chunk_size = d.chunk_size;
    r.steps_done = d.steps_done;
    r.channel = d.channel;
    r.is_send = d.is_send;
    r.flags = d.flags;
    body.Append(nf::RecordType::kProxyOp, r);
    ctx.recorded[KindIndex(nf::EventKind::kProxyStep)] += static_cast<uint64_t>(d.steps_done);
  });
  ctx.recorded[KindIndex(nf::EventKind::kProxyOp)] += n;
}

void Serializer::WriteApis(Context& ctx, nf::RecordWriter& strings, nf::RecordWriter& body) {
  ctx.apis.DrainDone([&](const ApiData& d) {
    nf::ApiRecord r{};
    r.api_id = d.api_id;
    r.parent_id = d.parent_id;
    r.count = d.count;
    r.stream = d.stream;
    r.host_start_ns = d.host_start_ns;
    r.host_stop_ns = d.host_stop_ns;
    r.group_start_stop_ns = d.group_start_stop_ns;
    r.group_end_start_ns = d.group_end_start_ns;
    r.comm = ctx.file_id();
    r.func = InternPointer(d.func, strings);
    r.dtype = InternPointer(d.dtype, strings);
    r.root = d.root;
    r.group_depth = d.group_depth;
    r.kind = static_cast<uint8_t>(d.kind);
    r.graph_captured = d.graph_captured;
    body.Append(nf::RecordType::kApi, r);
    if (d.kind == nf::ApiKind::kKernelLaunch && on_launch_stream) on_launch_stream(d.stream);
    ++ctx.recorded[KindIndex(EventKindOf(d.kind))];
  });
}

void Serializer::WriteStats(Context& ctx, uint64_t seq_gaps, bool force, nf::RecordWriter& body) {
  nf::StatsRecord s{};
  s.comm = ctx.file_id();
  s.time_ns = RealtimeNs();
  for (int k = 0; k < nf::kNumEventKinds; ++k) {
    s.recorded[k] = ctx.recorded[k];
    s.dropped[k] = ctx.dropped(k);
    s.orphaned[k] = ctx.orphaned(k);
  }
  s.colls_seen = ctx.colls_seen();
  s.seq_gaps = seq_gaps;
  // Counters only grow, so an unchanged sum means an unchanged record: skip it.
  uint64_t sum = s.colls_seen + s.seq_gaps;
  for (int k = 0; k < nf::kNumEventKinds; ++k) sum += s.recorded[k] + s.dropped[k] + s.orphaned[k];
  if (!force && sum == ctx.last_stats_sum) return;
  ctx.last_stats_sum = sum;
  body.Append(nf::RecordType::kStats, s);
}

}  // namespace commlens::recorder
