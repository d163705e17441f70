#!/usr/bin/env bash
# Makes fuzz/corpus/nsys/base.sqlite, the export nsys_fuzzer edits: a real Nsight Systems
# export cut down to the first 5 ms of step 3 of examples/traces/nsys-1gpu/moe-gpu-metrics
# (an all-to-all and grouped send/receive pairs with their kernels, copies, sets, syncs,
# CUDA API calls, NVTX ranges with NCCL payloads, GPU metric samples), with the NCCL init
# ranges, only the tables the importer reads, and only the strings the kept rows use.
# The fuzzer's inputs are edits of this file: remaking it changes what every edit in
# fuzz/corpus/nsys/ means, so it is committed and made again only on purpose.
#   fuzz/make_nsys_seed.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
db=$work/moe.sqlite
zcat examples/traces/nsys-1gpu/moe-gpu-metrics/rank0.sqlite.gz > "$db"
sqlite3 "$db" <<'SQL'
CREATE TEMP TABLE win AS SELECT 16370961929 AS a, 16370961929 + 5000000 AS b;
DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE start NOT BETWEEN (SELECT a FROM win) AND (SELECT b FROM win);
DELETE FROM CUPTI_ACTIVITY_KIND_MEMCPY WHERE start NOT BETWEEN (SELECT a FROM win) AND (SELECT b FROM win);
DELETE FROM CUPTI_ACTIVITY_KIND_MEMSET WHERE start NOT BETWEEN (SELECT a FROM win) AND (SELECT b FROM win);
DELETE FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION WHERE start NOT BETWEEN (SELECT a FROM win) AND (SELECT b FROM win);
DELETE FROM CUPTI_ACTIVITY_KIND_RUNTIME WHERE start NOT BETWEEN (SELECT a FROM win) AND (SELECT b FROM win);
DELETE FROM GPU_METRICS WHERE timestamp NOT BETWEEN (SELECT a FROM win) AND (SELECT b FROM win);
DELETE FROM NVTX_EVENTS WHERE eventType != 75
  AND start NOT BETWEEN (SELECT a FROM win) AND (SELECT b FROM win)
  AND coalesce(textId, -1) NOT IN (SELECT id FROM StringIds WHERE value LIKE 'ncclCommInit%');
DELETE FROM TARGET_INFO_SYSTEM_ENV WHERE name NOT IN ('Hostname', 'DeviceEnvironment');
UPDATE TARGET_INFO_SYSTEM_ENV SET value = 'RANK=0;LOCAL_RANK=0;WORLD_SIZE=1;LOCAL_WORLD_SIZE=1;MASTER_PORT=29500'
  WHERE name = 'DeviceEnvironment';
DELETE FROM PROCESSES WHERE pid NOT IN (SELECT (globalPid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_KERNEL);
DELETE FROM ThreadNames WHERE (globalTid >> 24) & 16777215 NOT IN (SELECT pid FROM PROCESSES);
DELETE FROM StringIds WHERE id NOT IN (
  SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL
  UNION SELECT mangledName FROM CUPTI_ACTIVITY_KIND_KERNEL UNION SELECT nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME
  UNION SELECT textId FROM NVTX_EVENTS WHERE textId IS NOT NULL UNION SELECT nameId FROM ThreadNames);
SQL
# Every table the importer does not read goes.
sqlite3 "$db" "SELECT 'DROP TABLE \"' || name || '\";' FROM sqlite_master WHERE type = 'table' AND name NOT IN (
  'META_DATA_EXPORT', 'StringIds', 'TARGET_INFO_SESSION_START_TIME', 'TARGET_INFO_SYSTEM_ENV',
  'CUPTI_ACTIVITY_KIND_KERNEL', 'CUPTI_ACTIVITY_KIND_MEMCPY', 'CUPTI_ACTIVITY_KIND_MEMSET',
  'CUPTI_ACTIVITY_KIND_SYNCHRONIZATION', 'NVTX_PAYLOAD_SCHEMA_ENTRIES', 'NVTX_PAYLOAD_ENUMS',
  'NVTX_PAYLOAD_ENUM_ENTRIES', 'NVTX_EVENTS', 'CUPTI_ACTIVITY_KIND_RUNTIME', 'PROCESSES', 'ThreadNames',
  'TARGET_INFO_GPU', 'GPU_METRICS', 'TARGET_INFO_GPU_METRICS')" | sqlite3 "$db"
rm -f fuzz/corpus/nsys/base.sqlite
sqlite3 "$db" "PRAGMA page_size = 1024; VACUUM INTO 'fuzz/corpus/nsys/base.sqlite';"
ls -l fuzz/corpus/nsys/base.sqlite
