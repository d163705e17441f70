#!/usr/bin/env node
// Turns a per-op trace of ByteDance's straggler artifact (ByteDance-Seed/StragglerAnalysis,
// data/trace-*.parquet; ../shared/reference/whatif.md §1) into a job commlens reads: one
// PyTorch-profiler (Kineto) JSON trace per worker, so that every commlens verb (analyze,
// report, whatif) runs on the artifact's production jobs as on a job of ours.
//
//   node scripts/whatif/bytedance_to_kineto.mjs data/trace-ST.parquet OUT_DIR
//   (needs the npm packages hyparquet and hyparquet-compressors: NODE_PATH or
//    scripts/whatif/setup.sh installs them into build/npm-whatif)
//
// A worker is (dp_rank, stage); it becomes rank dp_rank + dp * stage of a dp x pp world.
// The artifact's steps are sampled and each re-based to 0: they are laid end to end, each
// after the previous one's last op plus a tenth of it, with a ProfilerStep#<step> range on
// every rank. Its op types become GPU activities on streams by kind:
//   forward/backward compute, optimizer, layernorm-grads-all-reduce (a local op there)
//                                  kernels named after the op type, stream 7
//   forward/backward send/recv     ncclDevKernel_SendRecv with PyTorch's collective args
//                                  (send/recv, the peer's rank, the pipeline's group),
//                                  one stream per op type (20-23), as the artifact's four
//                                  chains
//   params-all-gather, grads-reduce-scatter
//                                  all-gather / reduce-scatter of the data-parallel group
//                                  of the stage (stream 30)
//   embedding-grads-all-reduce     all-reduce of {first stage, last stage} of the replica
//                                  (stream 31)
//   optimizer-clip-main-grad       all-reduce of every worker (stream 32)
//   gc                             left out (a zero-length marker)
// Communication kernels carry their op type in their name ("... [forward-send]"): the
// artifact's ideal is per op type, and four p2p types (and three all-reduce ones) that
// share one kernel name would pool into one typical transfer (SE's ideal step 5.969 s
// pooled, 5.900 s per type; the artifact's 5.897 s). A real trace tells them apart only by
// what the framework annotates around them.
// Collectives get PyTorch's "Seq" per group (the k-th of the group on every member);
// message sizes are not in the artifact (unknown). Times are the artifact's, in µs.
import fs from 'fs'
import path from 'path'
import { parquetReadObjects } from 'hyparquet'
import { compressors } from 'hyparquet-compressors'

const [input, outDir] = process.argv.slice(2)
if (!input || !outDir) {
  console.error('usage: bytedance_to_kineto.mjs TRACE.parquet OUT_DIR')
  process.exit(64)
}
const buf = fs.readFileSync(input)
const rows = await parquetReadObjects({ file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength), compressors })
const num = (v) => (typeof v === 'bigint' ? Number(v) : v)
for (const r of rows) for (const k of Object.keys(r)) r[k] = num(r[k])
const dp = Math.max(...rows.map((r) => r.dp_rank)) + 1
const pp = Math.max(...rows.map((r) => r.stage)) + 1
const world = dp * pp
const rankOf = (dpRank, stage) => dpRank + dp * stage

// Steps end to end: each after the previous one's span plus a tenth.
const steps = [...new Set(rows.map((r) => r.step))].sort((a, b) => a - b)
const span = new Map(steps.map((s) => [s, 0]))
for (const r of rows) span.set(r.step, Math.max(span.get(r.step), r.start_ts + r.duration))
const offset = new Map()
let t = 0
for (const s of steps) {
  offset.set(s, t)
  t += span.get(s) * 1.1
}
const us = (seconds) => seconds * 1e6

// Process groups, as PyTorch's profiler names them.
const groups = []
const groupOf = new Map()
function group(key, desc, ranks) {
  if (!groupOf.has(key)) {
    groupOf.set(key, { name: String(groups.length + 1), desc, ranks })
    groups.push(groupOf.get(key))
  }
  return groupOf.get(key)
}
const ppGroup = (d) => group(`pp${d}`, 'pipeline_parallel', [...Array(pp).keys()].map((s) => rankOf(d, s)))
const dpGroup = (s) => group(`dp${s}`, 'data_parallel', [...Array(dp).keys()].map((d) => rankOf(d, s)))
const embGroup = (d) => group(`emb${d}`, 'embedding', [...new Set([rankOf(d, 0), rankOf(d, pp - 1)])])
const worldGroup = () => group('world', 'default_pg', [...Array(world).keys()])

const P2P = {
  'forward-send': { op: 'send', peer: 1, stream: 20 },
  'forward-recv': { op: 'recv', peer: -1, stream: 21 },
  'backward-send': { op: 'send', peer: -1, stream: 22 },
  'backward-recv': { op: 'recv', peer: 1, stream: 23 },
}
const COLL = {
  'params-all-gather': { op: 'all_gather_into_tensor', kernel: 'ncclDevKernel_AllGather_RING_LL', stream: 30, g: (r) => dpGroup(r.stage) },
  'grads-reduce-scatter': { op: 'reduce_scatter_tensor', kernel: 'ncclDevKernel_ReduceScatter_Sum_f32_RING_LL', stream: 30, g: (r) => dpGroup(r.stage) },
  'separate-grads-all-reduce': { op: 'allreduce', kernel: 'ncclDevKernel_AllReduce_Sum_f32_RING_LL', stream: 30, g: (r) => dpGroup(r.stage) },
  'embedding-grads-all-reduce': { op: 'allreduce', kernel: 'ncclDevKernel_AllReduce_Sum_f32_RING_LL', stream: 31, g: (r) => embGroup(r.dp_rank) },
  'optimizer-clip-main-grad': { op: 'allreduce', kernel: 'ncclDevKernel_AllReduce_Sum_f32_RING_LL', stream: 32, g: () => worldGroup() },
}

const byRank = new Map()
for (const r of rows) {
  const rank = rankOf(r.dp_rank, r.stage)
  if (!byRank.has(rank)) byRank.set(rank, [])
  byRank.get(rank).push(r)
}
fs.mkdirSync(outDir, { recursive: true })
let correlation = 1
const counts = { ranks: 0, ops: 0, left_out: 0 }
for (const [rank, ops] of [...byRank.entries()].sort((a, b) => a[0] - b[0])) {
  ops.sort((a, b) => a.step - b.step || a.start_ts - b.start_ts || a.optype.localeCompare(b.optype))
  const events = []
  const seq = new Map()  // group name -> next Seq on this rank
  for (const s of steps) {
    const mine = ops.filter((o) => o.step === s)
    if (!mine.length) continue
    const lo = Math.min(...mine.map((o) => o.start_ts)), hi = Math.max(...mine.map((o) => o.start_ts + o.duration))
    events.push({ ph: 'X', cat: 'user_annotation', name: `ProfilerStep#${s}`, pid: rank, tid: 1,
                  ts: us(offset.get(s) + Math.min(0, lo)), dur: us(Math.max(hi, span.get(s)) - Math.min(0, lo)) })
  }
  for (const o of ops) {
    const ts = us(offset.get(o.step) + o.start_ts), dur = us(o.duration)
    const corr = correlation++
    const launch = { ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: rank, tid: 1, ts, dur: 0, args: { correlation: corr } }
    const kernel = { ph: 'X', cat: 'kernel', pid: 0, ts, dur, args: { device: 0, correlation: corr } }
    const p2p = P2P[o.optype], coll = COLL[o.optype]
    if (o.optype === 'gc') {
      ++counts.left_out
      continue
    } else if (p2p) {
      const peerStage = o.stage + p2p.peer
      if (peerStage < 0 || peerStage >= pp) { ++counts.left_out; continue }
      const g = ppGroup(o.dp_rank)
      const peer = rankOf(o.dp_rank, peerStage)
      Object.assign(kernel, { name: `ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>) [${o.optype}]`, tid: p2p.stream })
      Object.assign(kernel.args, { stream: p2p.stream, 'Collective name': p2p.op, 'Process Group Name': g.name,
        'Process Group Description': g.desc, 'Process Group Ranks': JSON.stringify(g.ranks), 'Group size': g.ranks.length,
        dtype: 'Float', [p2p.op === 'send' ? 'Dst Rank' : 'Src Rank']: peer })
    } else if (coll) {
      const g = coll.g(o)
      const n = seq.get(g.name) || 0
      seq.set(g.name, n + 1)
      Object.assign(kernel, { name: `${coll.kernel} [${o.optype}]`, tid: coll.stream })
      Object.assign(kernel.args, { stream: coll.stream, 'Collective name': coll.op, 'Process Group Name': g.name,
        'Process Group Description': g.desc, 'Process Group Ranks': JSON.stringify(g.ranks), 'Group size': g.ranks.length,
        dtype: 'Float', Seq: n })
    } else {
      Object.assign(kernel, { name: o.optype, tid: 7 })
      kernel.args.stream = 7
    }
    events.push(launch, kernel)
    ++counts.ops
  }
  const doc = {
    schemaVersion: 1,
    distributedInfo: { backend: 'nccl', rank, world_size: world, pg_count: groups.length + 1,
      pg_config: [{ pg_name: '0', pg_desc: 'default_pg', pg_size: world, ranks: [...Array(world).keys()] }]
        .concat(groups.map((g) => ({ pg_name: g.name, pg_desc: g.desc, pg_size: g.ranks.length, ranks: g.ranks }))) },
    deviceProperties: [{ id: 0, name: 'artifact GPU' }],
    traceEvents: events,
  }
  fs.writeFileSync(path.join(outDir, `rank${rank}.json`), JSON.stringify(doc))
  ++counts.ranks
}
console.log(`${input}: ${rows.length} ops of ${dp} x ${pp} workers (dp x pp), ${steps.length} steps -> ${counts.ranks} ` +
            `ranks in ${outDir} (${counts.ops} activities; ${counts.left_out} left out: gc markers and sends past the ends)`)
