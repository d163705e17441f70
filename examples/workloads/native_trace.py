#!/usr/bin/env python3
"""Reader of commlens native traces (.cltrace), standard library only.

The C++ reader (src/importers/native) is the reference; this one exists for machines
that have Python but not commlens (the GPU machine's check script uses it). The format
is documented in docs/formats.md:

  file   = header(32 bytes) record*
  record = u32 crc32 | u32 payload_size | u16 type | u16 reserved | payload
  crc32  = zlib.crc32 of everything after the crc field (size, type, reserved, payload)

Usage:
  native_trace.py FILE...           one line per file: ops, timing, drops
  native_trace.py --json FILE       the decoded trace as JSON (ops with GPU times on the
                                    host clock, communicators, stats)
"""
import json
import struct
import sys
import zlib

MAGIC = b"\x89CLTRC\r\n"
HEADER = struct.Struct("<8sHHII2II")
RECORD = struct.Struct("<IIHH")
NO_SEQ = 2**64 - 1

# Payload layouts of the plugin's records (src/recorder/native_format/format.h), by record
# type; the sampler's records (11-14, format 1.1) and ABI v7's OpDetail (15, format 1.2)
# are skipped like any unknown type.
LAYOUTS = {
    2: ("process", struct.Struct("<qqiiiiIIIIIIII"),
        "start_realtime_ns start_monotonic_ns pid global_rank world_size local_rank hostname "
        "job_id plugin_version abi_version event_mask buffer_events flush_interval_ms writer"),
    3: ("comm", struct.Struct("<QqIIiiiI"),
        "comm_hash init_realtime_ns comm name rank nranks nnodes abi_version"),
    4: ("op", struct.Struct("<QQQQQqqIIIIIiBBBBI"),
        "op_id api_id count nccl_seq comm_seq host_start_ns host_stop_ns comm func dtype algo "
        "proto root_or_peer kind channels warps flags reserved"),
    5: ("kernel_timing", struct.Struct("<QQQqII"),
        "op_id gpu_start gpu_stop clock_offset_upper channels flags"),
    6: ("proxy_op", struct.Struct("<QqqqqQQQQIiiiiBBBB"),
        "op_id host_start_ns host_stop_ns first_step_start_ns last_step_stop_ns bytes net_wait_ns "
        "gpu_wait_ns peer_wait_ns comm peer steps chunk_size steps_done channel is_send flags "
        "reserved"),
    7: ("api", struct.Struct("<QQQQqqqqIIIiiBBH"),
        "api_id parent_id count stream host_start_ns host_stop_ns group_start_stop_ns "
        "group_end_start_ns comm func dtype root group_depth kind graph_captured reserved"),
    8: ("stats", struct.Struct("<IIq16Q16Q16QQQ"), None),
    9: ("mark", struct.Struct("<qII"), "time_ns what reserved"),
    10: ("end", struct.Struct("<qII"), "time_ns reason reserved"),
    22: ("launch_timing", struct.Struct("<QqqII"), "api_id gpu_start_ns gpu_end_ns anchor_error_ns reserved"),
    23: ("launch_timer", struct.Struct("<qIIQQ"), "time_ns state reason timed untimed"),
}
KERNEL_LAUNCH = 3  # ApiRecord.kind
OP_KINDS = {0: "coll", 1: "p2p", 2: "ce_coll"}
SEND_FLAG = 1


class NativeTrace:
    """The records of one file, decoded. |status| is 'end' (clean), 'truncated' or 'corrupt'."""

    def __init__(self, path):
        self.path = path
        self.strings = {0: ""}
        self.process = None
        self.comms = {}
        self.ops = []
        self.timing = {}  # op_id -> [gpu_start, gpu_stop, channels]
        self.launch_timing = {}  # KernelLaunch api_id -> (start, end), host clock (format 1.7)
        self.launch_timer = None  # the last LaunchTimer record: its state, launches timed and not
        self.clock_samples = []  # (gpu_ns, offset upper bound)
        self.proxy_ops = []
        self.apis = []
        self.stats = {}  # comm -> last stats dict
        self.marks = []
        self.ended = False
        self.status = "end"
        self.bad_records = 0
        with open(path, "rb") as f:
            data = f.read()
        self._parse(data)

    def _parse(self, data):
        if len(data) < HEADER.size:
            raise ValueError(f"{self.path}: shorter than the native trace header")
        magic, major, minor, header_size, _flags, _r0, _r1, crc = HEADER.unpack_from(data)
        if magic != MAGIC:
            raise ValueError(f"{self.path}: not a commlens native trace (bad magic)")
        if zlib.crc32(data[:28]) != crc:
            raise ValueError(f"{self.path}: header fails its checksum")
        if major != 1:
            raise ValueError(f"{self.path}: native trace version {major}.{minor} not supported")
        at = header_size
        while at < len(data):
            if len(data) - at < RECORD.size:
                self.status = "truncated"
                return
            crc, size, rtype, _ = RECORD.unpack_from(data, at)
            if data[at:at + RECORD.size] == bytes(RECORD.size):
                self.status = "truncated"  # zero tail
                return
            if size > (1 << 20):
                self.status = "corrupt"
                return
            end = at + RECORD.size + size
            if end > len(data):
                self.status = "truncated"
                return
            if zlib.crc32(data[at + 4:end]) != crc:
                self.status = "truncated" if end == len(data) else "corrupt"
                return
            self._record(rtype, data[at + RECORD.size:end])
            at = end

    def _record(self, rtype, payload):
        if rtype == 1:
            if len(payload) < 4:
                self.bad_records += 1
                return
            (sid,) = struct.unpack_from("<I", payload)
            self.strings[sid] = payload[4:].decode("utf-8", "replace")
            return
        layout = LAYOUTS.get(rtype)
        if layout is None:
            return  # a type from a later minor version
        name, st, fields = layout
        if len(payload) < st.size:
            self.bad_records += 1
            return
        values = st.unpack_from(payload)
        if name == "stats":
            n = 16
            rec = {"comm": values[0], "time_ns": values[2], "recorded": list(values[3:3 + n]),
                   "dropped": list(values[3 + n:3 + 2 * n]), "orphaned": list(values[3 + 2 * n:3 + 3 * n]),
                   "colls_seen": values[3 + 3 * n], "seq_gaps": values[4 + 3 * n]}
            self.stats[rec["comm"]] = rec
            return
        rec = dict(zip(fields.split(), values))
        if name == "process":
            self.process = rec
        elif name == "comm":
            self.comms[rec["comm"]] = rec
        elif name == "op":
            self.ops.append(rec)
        elif name == "kernel_timing":
            t = self.timing.setdefault(rec["op_id"], [2**64, 0, 0])
            t[0] = min(t[0], rec["gpu_start"])
            t[1] = max(t[1], rec["gpu_stop"])
            t[2] += rec["channels"]
            if rec["channels"] > 0:
                self.clock_samples.append((rec["gpu_start"], rec["clock_offset_upper"]))
        elif name == "proxy_op":
            self.proxy_ops.append(rec)
        elif name == "api":
            self.apis.append(rec)
        elif name == "launch_timing":
            if 0 < rec["gpu_start_ns"] <= rec["gpu_end_ns"]:
                self.launch_timing[rec["api_id"]] = (rec["gpu_start_ns"], rec["gpu_end_ns"])
        elif name == "launch_timer":
            # 1.9 appends what timing cost the launching threads: host ns over launches
            rec["host_ns"], rec["host_launches"] = struct.unpack_from("<QQ", payload, st.size) \
                if len(payload) >= st.size + 16 else (0, 0)
            self.launch_timer = rec
        elif name == "mark":
            self.marks.append(rec)
        elif name == "end":
            self.ended = True

    def string(self, sid):
        return self.strings.get(sid, "")

    def clock_offset(self):
        """host - GPU clock: the smallest upper bound over the whole file (0 if none)."""
        return min((s[1] for s in self.clock_samples), default=0)

    def dropped(self):
        return sum(sum(s["dropped"]) for s in self.stats.values())

    def launch_times(self):
        """op api_id -> (start, end) of its group's kernel, timed by CUDA events around the
        launch, where the group (one per communicator) launched once."""
        group_of = {a["api_id"]: a["parent_id"] for a in self.apis if a["kind"] != KERNEL_LAUNCH and a["parent_id"]}
        launches = {}
        for a in self.apis:
            if a["kind"] == KERNEL_LAUNCH and a["parent_id"]:
                launches.setdefault(a["parent_id"], []).append(a["api_id"])
        out = {}
        for api, group in group_of.items():
            ids = launches.get(group, [])  # copy-engine ops: decoded_ops asks only for kernel ops
            if len(ids) == 1 and ids[0] in self.launch_timing:
                out[api] = self.launch_timing[ids[0]]
        return out

    def decoded_ops(self):
        """One dict per op: names resolved, GPU times converted to the host clock (ns): its
        kernel channels' when recorded, else its launch's CUDA events'."""
        offset = self.clock_offset()
        by_launch = self.launch_times() if self.launch_timing else {}
        out = []
        for o in self.ops:
            comm = self.comms.get(o["comm"], {})
            func = self.string(o["func"])
            if o["kind"] == 1:
                func = "Send" if o["flags"] & SEND_FLAG else "Recv"
            t = self.timing.get(o["op_id"])
            timed = t is not None and t[2] > 0 and t[1] >= t[0]
            if not timed and o["kind"] != 2 and o["api_id"] in by_launch:  # 2: copy-engine, no kernel
                start, end = by_launch[o["api_id"]]
                t, timed, offset_here = [start, end, 0], True, 0
            else:
                offset_here = offset
            out.append({
                "op_id": o["op_id"], "kind": OP_KINDS.get(o["kind"], "?"), "func": func,
                "dtype": self.string(o["dtype"]), "count": o["count"],
                "algo": self.string(o["algo"]), "proto": self.string(o["proto"]),
                "channels": o["channels"], "root_or_peer": o["root_or_peer"],
                "nccl_seq": None if o["nccl_seq"] == NO_SEQ else o["nccl_seq"], "comm_seq": o["comm_seq"],
                "comm_hash": comm.get("comm_hash"), "nranks": comm.get("nranks"),
                "host_start_ns": o["host_start_ns"], "host_stop_ns": o["host_stop_ns"],
                "gpu_timed": timed,
                "start_ns": (t[0] + offset_here) if timed else o["host_start_ns"],
                "end_ns": (t[1] + offset_here) if timed else o["host_stop_ns"],
                "kernel_channels": t[2] if t else 0,
            })
        out.sort(key=lambda r: r["start_ns"])
        return out

    def summary(self):
        ops = self.decoded_ops()
        return {
            "path": self.path, "status": self.status, "ended": self.ended,
            "rank": self.process["global_rank"] if self.process else None,
            "hostname": self.string(self.process["hostname"]) if self.process else None,
            "abi_version": self.process["abi_version"] if self.process else None,
            "comms": [{"comm_hash": c["comm_hash"], "name": self.string(c["name"]), "rank": c["rank"],
                       "nranks": c["nranks"], "nnodes": c["nnodes"]} for c in self.comms.values()],
            "ops": ops, "gpu_timed_ops": sum(1 for o in ops if o["gpu_timed"]),
            "launches_timed": self.launch_timer["timed"] if self.launch_timer else None,
            "launches_untimed": self.launch_timer["untimed"] if self.launch_timer else None,
            # what timing cost the launching threads (1.9): host ns of the timer's CUDA calls
            "launch_timing_host_ns": self.launch_timer["host_ns"] if self.launch_timer else None,
            "launch_timing_host_launches": self.launch_timer["host_launches"] if self.launch_timer else None,
            "proxy_ops": len(self.proxy_ops), "api_events": len(self.apis),
            "dropped": self.dropped(), "bad_records": self.bad_records,
            "clock_offset_ns": self.clock_offset(), "clock_samples": len(self.clock_samples),
            "seq_gaps": max((s["seq_gaps"] for s in self.stats.values()), default=0),
            "marks": [{"time_ns": m["time_ns"], "what": m["what"]} for m in self.marks],
        }


def main(argv):
    as_json = "--json" in argv
    paths = [a for a in argv if a != "--json"]
    if not paths:
        print(__doc__)
        return 2
    for path in paths:
        try:
            trace = NativeTrace(path)
        except (OSError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
        s = trace.summary()
        if as_json:
            json.dump(s, sys.stdout)
            sys.stdout.write("\n")
            continue
        durs = sorted(o["end_ns"] - o["start_ns"] for o in s["ops"] if o["gpu_timed"])
        med = durs[len(durs) // 2] / 1e3 if durs else float("nan")
        print(f"{path}: rank {s['rank']} ops {len(s['ops'])} (GPU-timed {s['gpu_timed_ops']}, median "
              f"{med:.1f} us) comms {len(s['comms'])} dropped {s['dropped']} status {s['status']}"
              f"{'' if s['launches_timed'] is None else ' launches timed ' + str(s['launches_timed']) + ' untimed ' + str(s['launches_untimed'])}"
              f"{'' if s['ended'] else ' (no end record)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
