#!/usr/bin/env python3
"""Synthesizes a large Nsight Systems SQLite export from a small real one, for benchmarks.

  scripts/synth_nsys.py SRC OUT [--target-mb MB | --repeat N] [--first-step K]

SRC is an export (`nsys export --type sqlite`, .sqlite or .sqlite.gz); OUT is written plain.
The benchmark input of docs/performance.md ("Nsight Systems import"):
  synth_nsys.py examples/traces/nsys-1gpu/moe/rank0.sqlite.gz /tmp/nsys_1g/rank0.sqlite

The output is synthesized from a real report, not a real run, in the manner of
synth_traces.py: OUT is a copy of SRC with N-1 copies of its steady part appended, copy k
shifted by k periods so it starts after copy k-1 ends. The steady part runs from the start
of step K (default: the second step; the first holds warm-up, compilation and NCCL's
communicator set-up) to the end of the last one, where steps are the NVTX ranges named
"step N" or "iteration N" (in a report of several processes, step N runs from the first
process's start to the last one's end); the period is that span plus the mean gap between
steps.
What is copied: CUDA API rows (CUPTI_ACTIVITY_KIND_RUNTIME) and NVTX ranges and marks
that start in the span; kernels, copies, memsets and synchronisations launched by those
API calls (by correlation id, per process), wherever they ran. In copy k, correlation ids
and NVTX range ids are offset by k times (the largest in the file + 1), so every launch
still links to its GPU work, and step ranges count on ("step 7" follows "step 6"). Rows
after the steady part (the final synchronisation, shutdown) move to after the last copy.
Everything else (strings, payload schemas, CPU samples, metadata) is the original's.

--target-mb picks N as the file grows: copies are added until OUT reaches MB (decimal,
1e6 bytes; default 1000); --repeat N makes exactly N-1 copies. Each copy is a few INSERT ... SELECT
statements over the original rows, so a 1 GB export takes well under a minute.
"""
import argparse
import gzip
import os
import re
import shutil
import sqlite3
import sys
import time

STEP_RE = re.compile(r"(step|iteration) (\d+)")
NVTX_RANGES = (59, 60)  # push/pop and start/end ranges (ENUM_NSYS_EVENT_TYPE)
API = "CUPTI_ACTIVITY_KIND_RUNTIME"
NVTX = "NVTX_EVENTS"
GPU_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
              "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION")
PID_MASK = ~0xFFFFFF  # globalTid -> globalPid: <HW:8><VM:8><PID:24><TID:24>


def copy_source(src, out):
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    if os.path.exists(out):
        os.remove(out)
    opener = gzip.open if src.endswith(".gz") else open
    with opener(src, "rb") as f, open(out, "wb") as g:
        shutil.copyfileobj(f, g, 1 << 20)


def tables(db):
    return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def columns(db, table):
    return [r[1] for r in db.execute(f"PRAGMA table_info({table})")]


def find_steps(db):
    """{number: (start, end)} of the step ranges; a step of several processes spans them all."""
    rows = db.execute(
        f"SELECT COALESCE(n.text, s.value), n.start, n.end FROM {NVTX} n "
        f"LEFT JOIN StringIds s ON s.id = n.textId "
        f"WHERE n.eventType IN {NVTX_RANGES} AND n.end IS NOT NULL")
    steps = {}
    for text, start, end in rows:
        m = STEP_RE.fullmatch(text or "")
        if m:
            n = int(m.group(2))
            old = steps.get(n, (start, end))
            steps[n] = (min(old[0], start), max(old[1], end))
    return steps


def max_of(db, have, table, column):
    if table not in have:
        return 0
    return db.execute(f"SELECT MAX({column}) FROM {table}").fetchone()[0] or 0


class Synth:
    def __init__(self, db, first_step):
        self.db = db
        self.have = tables(db)
        for need in (API, NVTX, "StringIds"):
            if need not in self.have:
                sys.exit(f"not an Nsight Systems export with CUDA and NVTX rows: no {need} table")
        steps = find_steps(db)  # {number: (start, end)}, over every process of the report
        if not steps:
            sys.exit('no NVTX ranges named "step N" or "iteration N": nothing to repeat')
        numbers = sorted(steps)
        if first_step is None:
            first_step = numbers[1] if len(numbers) > 1 else numbers[0]
        steady = [n for n in numbers if n >= first_step]
        if not steady:
            sys.exit(f"no step numbered {first_step} or later")
        self.s0, self.s1 = steps[steady[0]][0], max(steps[n][1] for n in steady)
        gaps = [max(0, steps[b][0] - steps[a][1]) for a, b in zip(steady, steady[1:])]
        self.period = self.s1 - self.s0 + (round(sum(gaps) / len(gaps)) if gaps else 0)
        self.step_lo, self.step_count = steady[0], steady[-1] - steady[0] + 1
        # Offsets that keep ids unique in every copy; correlation ids are shared by the API
        # and GPU tables, so one offset serves them all.
        self.corr_off = 1 + max(max_of(db, self.have, t, "correlationId") for t in (API,) + GPU_TABLES)
        self.range_off = 1 + max_of(db, self.have, NVTX, "rangeId")
        self.last_row = {t: max_of(db, self.have, t, "rowid") for t in (API, NVTX) + GPU_TABLES}
        # Per process, the correlation ids of the API calls made in the span: the GPU rows to copy.
        db.execute("CREATE TEMP TABLE span_corr (globalPid INTEGER, lo INTEGER, hi INTEGER)")
        db.execute(f"INSERT INTO span_corr SELECT globalTid & {PID_MASK}, MIN(correlationId), MAX(correlationId) "
                   f"FROM {API} WHERE start BETWEEN ? AND ? GROUP BY 1", (self.s0, self.s1))
        self.sql = {t: self.copy_sql(t) for t in (API, NVTX) + GPU_TABLES if t in self.have}
        print(f"steps {self.step_lo}..{self.step_lo + self.step_count - 1} copied "
              f"({(self.s1 - self.s0) / 1e6:.1f} ms), period {self.period / 1e6:.3f} ms", flush=True)

    def copy_sql(self, table):
        """INSERT ... SELECT of the span's rows of |table| (aliased t) for copy :k."""
        expr = {"start": "t.start + :dt", "end": "t.end + :dt",
                "correlationId": "CASE WHEN t.correlationId > 0 THEN t.correlationId + :k * :corr "
                                 "ELSE t.correlationId END"}
        src, where = f"{table} t", "t.rowid <= :last AND t.start BETWEEN :s0 AND :s1"
        if table == NVTX:
            expr["rangeId"] = "CASE WHEN t.rangeId > 0 THEN t.rangeId + :k * :range ELSE t.rangeId END"
            # a step range named by a registered string becomes a plain text one, renumbered
            name = "COALESCE(t.text, (SELECT value FROM StringIds WHERE id = t.textId))"
            number = f"substr({name}, instr({name}, ' ') + 1)"
            is_step = (f"t.eventType IN {NVTX_RANGES} AND ({name} GLOB 'step [0-9]*' OR "
                       f"{name} GLOB 'iteration [0-9]*') AND {number} NOT GLOB '*[^0-9]*'")
            expr["text"] = (f"CASE WHEN {is_step} THEN substr({name}, 1, instr({name}, ' ')) || "
                            f"(CAST({number} AS INTEGER) + :k * :nsteps) ELSE t.text END")
            expr["textId"] = f"CASE WHEN {is_step} THEN NULL ELSE t.textId END"
        elif table != API:  # GPU work: launched by the span's API calls, wherever it ran
            src = f"{table} t JOIN span_corr c ON c.globalPid = t.globalPid"
            where = "t.rowid <= :last AND t.correlationId BETWEEN c.lo AND c.hi"
        cols = columns(self.db, table)
        select = ", ".join(expr.get(c, f"t.{c}") for c in cols)
        return f"INSERT INTO {table} ({', '.join(cols)}) SELECT {select} FROM {src} WHERE {where}"

    def add_copy(self, k):
        for table, sql in self.sql.items():
            self.db.execute(sql, {"k": k, "dt": k * self.period, "corr": self.corr_off, "range": self.range_off,
                                  "nsteps": self.step_count, "last": self.last_row[table],
                                  "s0": self.s0, "s1": self.s1})

    def move_tail(self, copies):
        """Moves the original rows that follow the steady part to after the last copy."""
        dt = copies * self.period
        p = {"dt": dt, "s1": self.s1}
        for table in (API, NVTX):
            self.db.execute(f"UPDATE {table} SET start = start + :dt, end = end + :dt "
                            f"WHERE rowid <= :last AND start > :s1", dict(p, last=self.last_row[table]))
        for table in GPU_TABLES:
            if table in self.have:  # GPU work not launched in the span and running after it
                self.db.execute(
                    f"UPDATE {table} AS t SET start = start + :dt, end = end + :dt "
                    f"WHERE t.rowid <= :last AND t.start > :s1 AND NOT EXISTS (SELECT 1 FROM span_corr c "
                    f"WHERE c.globalPid = t.globalPid AND t.correlationId BETWEEN c.lo AND c.hi)",
                    dict(p, last=self.last_row[table]))


def grow(path, first_step, repeat, want_bytes):
    """Appends copies to the export at |path|; returns (copies, rows of the copied tables)."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = OFF")
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA cache_size = -65536")
    db.execute("BEGIN")
    synth = Synth(db, first_step)
    page = db.execute("PRAGMA page_size").fetchone()[0]

    def size():
        return db.execute("PRAGMA page_count").fetchone()[0] * page

    k = 0
    while (k + 1 < repeat) if repeat else size() < want_bytes:
        k += 1
        synth.add_copy(k)
        if k % 100 == 0:
            print(f"  {k} copies, {size() / 1e6:.0f} MB", flush=True)
    synth.move_tail(k)
    db.execute("COMMIT")
    rows = sum(db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in synth.sql)
    db.close()
    return k, rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("src", help="an Nsight Systems SQLite export (.sqlite or .sqlite.gz)")
    p.add_argument("out", help="the export to write (plain SQLite)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--target-mb", type=float, default=1000.0, help="grow OUT to at least MB (default 1000: 1 GB)")
    g.add_argument("--repeat", type=int, help="N: the original + N-1 copies of the steady part")
    p.add_argument("--first-step", type=int, help="the first step copied (default: the second step)")
    args = p.parse_args()
    if args.repeat is not None and args.repeat < 1:
        p.error("--repeat must be >= 1")

    t0 = time.time()
    copy_source(args.src, args.out)
    try:
        copies, rows = grow(args.out, args.first_step, args.repeat, args.target_mb * 1e6)
    except BaseException:  # no half-made export left behind
        os.remove(args.out)
        raise
    print(f"{args.out}: {copies} copies, {rows} CUDA API, NVTX and GPU rows, "
          f"{os.path.getsize(args.out) / 1e6:.1f} MB ({time.time() - t0:.1f} s)")

if __name__ == "__main__":
    main()
