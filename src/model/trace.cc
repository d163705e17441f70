#include "model/trace.h"

namespace commlens::model {

void GpuActivities::Reserve(size_t n) {
  start.reserve(n);
  end.reserve(n);
  name.reserve(n);
  device.reserve(n);
  stream.reserve(n);
  correlation.reserve(n);
  kind.reserve(n);
  cls.reserve(n);
  copy.reserve(n);
  bytes.reserve(n);
  comm.reserve(n);
  launch.reserve(n);
}

uint32_t GpuActivities::Append(TimeNs s, TimeNs e, StringId n, int32_t dev, int32_t strm,
                               int64_t corr, ActivityKind k) {
  start.push_back(s);
  end.push_back(e);
  name.push_back(n);
  device.push_back(dev);
  stream.push_back(strm);
  correlation.push_back(corr);
  kind.push_back(k);
  cls.push_back(ActivityClass::kUnclassified);
  copy.push_back(CopyKind::kNone);
  bytes.push_back(-1);
  comm.push_back(kNoIndex);
  launch.push_back(kNoTime);
  return static_cast<uint32_t>(start.size() - 1);
}

void HostEvents::Reserve(size_t n) {
  start.reserve(n);
  end.reserve(n);
  name.reserve(n);
  pid.reserve(n);
  tid.reserve(n);
  correlation.reserve(n);
  kind.reserve(n);
}

uint32_t HostEvents::Append(TimeNs s, TimeNs e, StringId n, int64_t p, int64_t t, int64_t corr,
                            HostKind k) {
  start.push_back(s);
  end.push_back(e);
  name.push_back(n);
  pid.push_back(ToThreadId(p));
  tid.push_back(ToThreadId(t));
  correlation.push_back(corr);
  kind.push_back(k);
  return static_cast<uint32_t>(start.size() - 1);
}

uint32_t Annotations::Append(TimeNs s, TimeNs e, StringId n, StringId dom, int64_t p, int64_t t,
                             int32_t dev) {
  start.push_back(s);
  end.push_back(e);
  name.push_back(n);
  domain.push_back(dom);
  pid.push_back(ToThreadId(p));
  tid.push_back(ToThreadId(t));
  device.push_back(dev);
  depth.push_back(0);
  return static_cast<uint32_t>(start.size() - 1);
}

void Flows::Append(int64_t i, StringId cat, FlowPhase ph, TimeNs t, int64_t p, int64_t th) {
  id.push_back(i);
  category.push_back(cat);
  phase.push_back(ph);
  time.push_back(t);
  pid.push_back(ToThreadId(p));
  tid.push_back(ToThreadId(th));
}

uint32_t CommOps::Append(TimeNs s, TimeNs e, CommOp o, StringId dt, int64_t in, int64_t out,
                         int64_t b, uint32_t g, int64_t sq, int32_t pr, uint32_t act) {
  start.push_back(s);
  end.push_back(e);
  op.push_back(o);
  dtype.push_back(dt);
  in_elems.push_back(in);
  out_elems.push_back(out);
  bytes.push_back(b);
  group.push_back(g);
  seq.push_back(sq);
  peer.push_back(pr);
  activity.push_back(act);
  algorithm.push_back(StringId{});
  protocol.push_back(StringId{});
  channels.push_back(-1);
  enqueue.push_back(0);
  flags.push_back(0);
  user_tag.push_back(0);
  launch.push_back(kNoTime);
  initial_sync.push_back(kNoTime);
  return static_cast<uint32_t>(start.size() - 1);
}

namespace {

template <typename... Columns>
uint64_t ColumnBytes(const Columns&... c) {
  return (uint64_t{0} + ... + (c.capacity() * sizeof(typename Columns::value_type)));
}

}  // namespace

uint64_t RankTrace::MemoryBytes() const {
  return ColumnBytes(gpu.start, gpu.end, gpu.name, gpu.device, gpu.stream, gpu.correlation, gpu.kind, gpu.cls,
                     gpu.copy, gpu.bytes, gpu.comm, gpu.launch) +
         ColumnBytes(host.start, host.end, host.name, host.pid, host.tid, host.correlation, host.kind) +
         ColumnBytes(annotations.start, annotations.end, annotations.name, annotations.domain, annotations.pid,
                     annotations.tid, annotations.device, annotations.depth) +
         ColumnBytes(flows.id, flows.category, flows.phase, flows.time, flows.pid, flows.tid) +
         ColumnBytes(comms.start, comms.end, comms.op, comms.dtype, comms.in_elems, comms.out_elems, comms.bytes,
                     comms.group, comms.seq, comms.peer, comms.activity, comms.algorithm, comms.protocol,
                     comms.channels, comms.enqueue, comms.flags, comms.user_tag, comms.launch, comms.initial_sync) +
         strings.bytes();
}

uint32_t RankTrace::FindOrAddGroup(const ProcessGroup& g) {
  for (size_t i = 0; i < groups.size(); ++i) {
    ProcessGroup& m = groups[i];
    if (m.name == g.name && (g.comm_hash == 0 || m.comm_hash == g.comm_hash)) {
      // Fill what the first sighting lacked.
      if (m.description.empty()) m.description = g.description;
      if (m.ranks.empty()) m.ranks = g.ranks;
      if (m.size == 0) m.size = g.size;
      if (m.self < 0) m.self = g.self;
      return static_cast<uint32_t>(i);
    }
  }
  groups.push_back(g);
  return static_cast<uint32_t>(groups.size() - 1);
}

}  // namespace commlens::model
