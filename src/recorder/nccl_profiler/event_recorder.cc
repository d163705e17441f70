#include "recorder/nccl_profiler/event_recorder.h"

#include "recorder/nccl_profiler/clock.h"
#include "recorder/nccl_profiler/recording_session.h"
#include "recorder/nccl_profiler/token.h"

namespace commlens::recorder {

namespace nf = native_format;

namespace {

// The token |value| if it names an event of |pool| in |ctx|, else 0. Parents always
// belong to the child's communicator; anything else is a foreign value.
uint64_t ParentOfPool(const Context& ctx, uint64_t value, Pool pool) {
  Token t;
  return DecodeToken(value, &t) && t.pool == pool && t.context == ctx.index() ? value : 0;
}

// A child event's parent token, or 0 after counting the child as an orphan.
uint64_t ParentOrOrphan(Context& ctx, uint64_t parent, Pool pool, EventKind child) {
  const uint64_t v = ParentOfPool(ctx, parent, pool);
  if (v == 0) ctx.CountOrphan(child);
  return v;
}

// Claims a slot of |pool| and returns it with its token, or counts a drop. The slot's
// data is zeroed unless the caller overwrites all of it (|zero| false).
template <typename T>
typename SlotPool<T>::Slot* Claim(Context& ctx, SlotPool<T>& pool, Pool which, EventKind kind,
                                  uint64_t* token, bool zero = true) {
  uint32_t index = 0;
  auto* slot = pool.Claim(&index);
  if (slot == nullptr) {
    ctx.CountDrop(kind);
    return nullptr;
  }
  *token = EncodeToken(Token{ctx.index(), which, index, pool.GenerationOf(slot)});
  if (zero) slot->data = T{};
  return slot;
}

WaitKind WaitOf(int state) {
  switch (state) {
    case abi::kProxyStepSendWait:
    case abi::kProxyStepRecvWait: return WaitKind::kNet;
    case abi::kProxyStepSendGpuWait:
    case abi::kProxyStepRecvGpuWait: return WaitKind::kGpu;
    case abi::kProxyStepSendPeerWait:
    case abi::kProxyStepRecvFlushWait: return WaitKind::kPeer;
    default: return WaitKind::kNone;
  }
}

// Ends the step's current wait segment at |now|.
void CloseSegment(ProxyStepData& s, int64_t now) {
  if (s.current != WaitKind::kNone) s.wait_ns[static_cast<int>(s.current)] += now - s.mark_ns;
  s.mark_ns = now;
}

// Folds a finished step into its ProxyOp, which is open until all its steps are done.
void FoldStep(Context& ctx, ProxyStepData& step, int64_t now) {
  CloseSegment(step, now);
  ctx.NoteProgress(now);  // the network moved a step
  Token t;
  if (!DecodeToken(step.proxy_op, &t) || t.pool != Pool::kProxyOp) return;
  auto* op = ctx.proxy_ops.FindOpen(t.slot, t.generation);
  if (op == nullptr) return;
  ProxyOpData& d = op->data;
  d.bytes += step.trans_size;
  for (int i = 0; i < 4; ++i) d.wait_ns[i] += step.wait_ns[i];
  if (d.first_step_start_ns == 0 || step.start_ns < d.first_step_start_ns) d.first_step_start_ns = step.start_ns;
  if (now > d.last_step_stop_ns) d.last_step_stop_ns = now;
  ++d.steps_done;
}

// Open -> Done, noting the stop time where the event keeps one; returns that time (0
// when the event keeps none or was not open).
template <typename T>
int64_t MarkStopped(SlotPool<T>& pool, const Token& t) {
  int64_t now = 0;
  if (auto* s = pool.FindOpen(t.slot, t.generation)) {
    if constexpr (requires { s->data.host_stop_ns; }) s->data.host_stop_ns = now = RealtimeNs();
    pool.MarkDone(s);
  }
  return now;
}

// An op starts: progress (context.h), counted also when it is not recorded, so the live
// hang alarm works outside the capture window. The time, for the op's record.
int64_t OpStarted(Context& ctx) {
  const int64_t now = RealtimeNs();
  ctx.NoteProgress(now);
  return now;
}

// Claims an op slot for |op| (filled by the caller but for its ids and start time).
void* RecordOp(Context& ctx, EventKind kind, const OpData& op, uint64_t api_parent, int64_t start_ns) {
  uint64_t token = 0;
  auto* slot = Claim(ctx, ctx.ops, Pool::kOp, kind, &token, /*zero=*/false);
  if (slot == nullptr) return nullptr;
  slot->data = op;
  slot->data.op_id = token;
  slot->data.api_id = ParentOfPool(ctx, api_parent, Pool::kApi);
  slot->data.host_start_ns = start_ns;
  return HandleFromValue(token);
}

}  // namespace

void* StartColl(Context& ctx, const CollArgs& a) {
  Session& session = TheSession();
  const bool recording = session.recording();  // before counting: the op that opens a
  const uint64_t comm_seq = ctx.NextCollSeq();  // capture window is not in it
  const int64_t now = OpStarted(ctx);
  session.OnCollSeen();
  session.OnOpStarted();
  if (!recording) return nullptr;
  OpData d{};
  d.count = a.count;
  d.nccl_seq = a.nccl_seq;
  d.comm_seq = comm_seq;
  d.func = a.func;
  d.dtype = a.dtype;
  d.algo = a.algo;
  d.proto = a.proto;
  d.root_or_peer = a.root;
  d.kind = nf::OpKind::kColl;
  d.channels = a.channels;
  d.warps = a.warps;
  d.kernel_variant = a.kernel_variant;
  d.user_tag = a.user_tag;
  d.flags = a.symmetric ? nf::kOpFlagSymmetric : 0;
  return RecordOp(ctx, EventKind::kColl, d, a.api_parent, now);
}

void* StartP2p(Context& ctx, const P2pArgs& a) {
  const bool send = a.func != nullptr && a.func[0] == 'S';
  const uint64_t comm_seq = ctx.NextP2pSeq(a.peer, send);
  const int64_t now = OpStarted(ctx);
  TheSession().OnOpStarted();
  if (!TheSession().recording()) return nullptr;
  OpData d{};
  d.count = a.count;
  d.nccl_seq = nf::kNoSeq;
  d.comm_seq = comm_seq;
  d.func = a.func;
  d.dtype = a.dtype;
  d.root_or_peer = a.peer;
  d.kind = nf::OpKind::kP2p;
  d.channels = a.channels;
  d.flags = send ? nf::kOpFlagSend : 0;
  d.user_tag = a.user_tag;
  return RecordOp(ctx, EventKind::kP2p, d, a.api_parent, now);
}

void* StartCeColl(Context& ctx, const CeCollArgs& a) {
  const uint64_t comm_seq = ctx.NextCeSeq();
  const int64_t now = OpStarted(ctx);
  if (!TheSession().recording()) return nullptr;
  OpData d{};
  d.count = a.count;
  d.nccl_seq = a.nccl_seq;
  d.comm_seq = comm_seq;
  d.func = a.func;
  d.dtype = a.dtype;
  d.root_or_peer = a.root;
  d.kind = nf::OpKind::kCeColl;
  d.user_tag = a.user_tag;
  return RecordOp(ctx, EventKind::kCeColl, d, a.api_parent, now);
}

namespace {

// This thread's last GroupApi event and what NCCL said of its calls' capture into a CUDA
// graph (each call says it of its communicator; a group may span communicators whose
// streams differ). The group's KernelLaunch names it as parent, so when all said the same
// the launch timer knows the launch's capture state without asking the driver on the
// launch's path. A mixed group, or a launch from another thread (a non-blocking
// communicator's), does not know: the timer asks.
struct LastGroup {
  uint64_t token = 0;
  bool captured = false, uncaptured = false;  // some call said so
};
thread_local LastGroup t_last_group;

// A collective or p2p call of the group (also one whose event is dropped).
void NoteCallCapture(const ApiArgs& a) {
  if (a.parent != 0 && a.parent == t_last_group.token)
    (a.graph_captured ? t_last_group.captured : t_last_group.uncaptured) = true;
}

launch_timer::LaunchTimer::Capture CaptureOfGroup(uint64_t group) {
  using Capture = launch_timer::LaunchTimer::Capture;
  const LastGroup& g = t_last_group;
  if (group == 0 || group != g.token || g.captured == g.uncaptured) return Capture::kUnknown;
  return g.captured ? Capture::kYes : Capture::kNo;
}

}  // namespace

void* StartApi(Context& ctx, const ApiArgs& a) {
  if (!TheSession().recording()) return nullptr;
  if (a.kind == nf::ApiKind::kCollApi || a.kind == nf::ApiKind::kP2pApi) NoteCallCapture(a);
  static constexpr EventKind kKinds[] = {EventKind::kGroupApi, EventKind::kCollApi,
                                         EventKind::kP2pApi, EventKind::kKernelLaunch};
  uint64_t token = 0;
  auto* slot = Claim(ctx, ctx.apis, Pool::kApi, kKinds[static_cast<int>(a.kind)], &token);
  if (slot == nullptr) return nullptr;
  ApiData& d = slot->data;
  d.api_id = token;
  d.parent_id = ParentOfPool(ctx, a.parent, Pool::kApi);
  d.count = a.count;
  d.stream = a.stream;
  d.func = a.func;
  d.dtype = a.dtype;
  d.root = a.root;
  d.group_depth = a.group_depth;
  d.kind = a.kind;
  using Capture = launch_timer::LaunchTimer::Capture;
  const bool launch = a.kind == nf::ApiKind::kKernelLaunch;
  const Capture capture = launch ? CaptureOfGroup(a.parent) : Capture::kUnknown;
  d.graph_captured = a.graph_captured || capture == Capture::kYes ? 1 : 0;  // a launch: its group's
  d.host_start_ns = RealtimeNs();
  if (a.kind == nf::ApiKind::kGroupApi) t_last_group = LastGroup{token, a.graph_captured, !a.graph_captured};
  // Last: NCCL launches right after this returns, and the timer's event must come just
  // before the kernel on its stream.
  d.launch_slot = launch ? TheSession().TimeLaunchBegin(a.stream, capture) : launch_timer::LaunchTimer::kNone;
  return HandleFromValue(token);
}

void* StartKernelCh(Context& ctx, uint64_t parent, uint8_t channel, uint64_t ptimer) {
  const uint64_t op = ParentOrOrphan(ctx, parent, Pool::kOp, EventKind::kKernelCh);
  if (op == 0) return nullptr;
  uint64_t token = 0;
  auto* slot = Claim(ctx, ctx.kernels, Pool::kKernel, EventKind::kKernelCh, &token);
  if (slot == nullptr) return nullptr;
  KernelData& d = slot->data;
  d.op_id = op;
  d.channel = channel;
  d.start_ptimer = ptimer;
  d.start_obs_ns = RealtimeNs();
  return HandleFromValue(token);
}

void* StartKernelPhase(Context& ctx, uint64_t parent, uint8_t phase, uint64_t ptimer) {
  Token t;
  if (phase >= nf::kKernelPhases || !DecodeToken(parent, &t) || t.pool != Pool::kKernel || t.context != ctx.index()) {
    ctx.CountOrphan(EventKind::kKernelPhase);
    return nullptr;
  }
  auto* s = ctx.kernels.FindOpen(t.slot, t.generation);
  if (s == nullptr) {
    ctx.CountOrphan(EventKind::kKernelPhase);
    return nullptr;
  }
  s->data.phase_start[phase] = ptimer;
  t.pool = static_cast<Pool>(static_cast<uint8_t>(Pool::kKernelPhase) + phase);
  return HandleFromValue(EncodeToken(t));
}

void* StartProxyOp(Context& ctx, uint64_t parent, const abi::ProxyOpDescr& p) {
  // With PXN the op may come from another process's proxy: its parent handle is not
  // ours to decode. Record it unattached while recording.
  const bool remote = p.pid != TheSession().pid();
  const uint64_t op = remote ? 0 : ParentOrOrphan(ctx, parent, Pool::kOp, EventKind::kProxyOp);
  if (remote ? !TheSession().recording() : op == 0) return nullptr;
  uint64_t token = 0;
  auto* slot = Claim(ctx, ctx.proxy_ops, Pool::kProxyOp, EventKind::kProxyOp, &token);
  if (slot == nullptr) return nullptr;
  ProxyOpData& d = slot->data;
  d.op_id = op;
  d.peer = p.peer;
  d.steps = p.nSteps;
  d.chunk_size = p.chunkSize;
  d.channel = p.channelId;
  d.is_send = p.isSend ? 1 : 0;
  d.flags = remote ? nf::kProxyFlagRemote : 0;
  d.host_start_ns = RealtimeNs();
  return HandleFromValue(token);
}

void* StartProxyStep(Context& ctx, uint64_t parent, int step) {
  const uint64_t proxy_op = ParentOrOrphan(ctx, parent, Pool::kProxyOp, EventKind::kProxyStep);
  if (proxy_op == 0) return nullptr;
  uint64_t token = 0;
  auto* slot = Claim(ctx, ctx.proxy_steps, Pool::kProxyStep, EventKind::kProxyStep, &token);
  if (slot == nullptr) return nullptr;
  ProxyStepData& d = slot->data;
  d.proxy_op = proxy_op;
  d.start_ns = RealtimeNs();
  d.mark_ns = d.start_ns;
  d.current = WaitKind::kNone;
  (void)step;  // steps are folded into their ProxyOp; the number is not kept
  return HandleFromValue(token);
}

void StopEvent(void* handle) {
  Token t;
  if (!DecodeToken(HandleValue(handle), &t)) return;
  Context* ctx = TheSession().ContextAt(t.context);
  if (ctx == nullptr) return;
  switch (t.pool) {
    case Pool::kOp: MarkStopped(ctx->ops, t); break;
    case Pool::kApi:
      if (auto* s = ctx->apis.FindOpen(t.slot, t.generation); s && s->data.kind == nf::ApiKind::kKernelLaunch)
        TheSession().TimeLaunchEnd(s->data.launch_slot, s->data.api_id);  // first: NCCL has just launched
      MarkStopped(ctx->apis, t);
      break;
    case Pool::kKernel: MarkStopped(ctx->kernels, t); break;
    case Pool::kProxyOp:
      if (int64_t now = MarkStopped(ctx->proxy_ops, t)) ctx->NoteProgress(now);
      break;
    case Pool::kProxyStep:
      if (auto* s = ctx->proxy_steps.FindOpen(t.slot, t.generation)) {
        FoldStep(*ctx, s->data, RealtimeNs());
        ctx->proxy_steps.Release(s);
      }
      break;
    default:  // a kernel phase: it lives in its kernel channel's slot
      break;
  }
}

void RecordEventState(void* handle, int state, const abi::StateArgs* args) {
  Token t;
  if (!DecodeToken(HandleValue(handle), &t)) return;
  Context* ctx = TheSession().ContextAt(t.context);
  if (ctx == nullptr) return;
  if (t.pool >= Pool::kKernelPhase && state == abi::kKernelPhaseStop && args != nullptr) {
    // The phase's stop, kept on its kernel channel while that is open.
    if (auto* s = ctx->kernels.FindOpen(t.slot, t.generation))
      s->data.phase_stop[static_cast<uint8_t>(t.pool) - static_cast<uint8_t>(Pool::kKernelPhase)] = args->kernelCh.pTimer;
  } else if (t.pool == Pool::kKernel && state == abi::kKernelChStop && args != nullptr) {
    if (auto* s = ctx->kernels.FindOpen(t.slot, t.generation)) {
      s->data.stop_ptimer = args->kernelCh.pTimer;
      s->data.stop_obs_ns = RealtimeNs();
      ctx->NoteProgress(s->data.stop_obs_ns);  // a channel of the op's kernel finished
    }
  } else if (t.pool == Pool::kProxyStep) {
    const WaitKind next = WaitOf(state);
    if (next == WaitKind::kNone) return;
    if (auto* s = ctx->proxy_steps.FindOpen(t.slot, t.generation)) {
      CloseSegment(s->data, RealtimeNs());
      s->data.current = next;
      if (args != nullptr) s->data.trans_size = args->proxyStep.transSize;
    }
  } else if (t.pool == Pool::kApi &&
             (state == abi::kGroupStartApiStop || state == abi::kGroupEndApiStart)) {
    if (auto* s = ctx->apis.FindOpen(t.slot, t.generation)) {
      int64_t now = RealtimeNs();
      if (state == abi::kGroupStartApiStop) s->data.group_start_stop_ns = now;
      else s->data.group_end_start_ns = now;
    }
  }
}

}  // namespace commlens::recorder
