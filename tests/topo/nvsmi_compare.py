#!/usr/bin/env python3
"""Compares `commlens topo --json` with what nvidia-smi reports on the same machine.

    nvsmi_compare.py --topo-json topo.json --topo-m topo_m.txt \
        --p2p-r p2p_r.txt --p2p-w p2p_w.txt [--bus-ids bus_ids.txt]

Inputs are nvidia-smi's own outputs, saved to files:
  --topo-m   nvidia-smi topo -m
  --p2p-r    nvidia-smi topo -p2p r
  --p2p-w    nvidia-smi topo -p2p w
  --bus-ids  nvidia-smi --query-gpu=index,pci.bus_id --format=csv,noheader

Prints one line per comparison, "MATCH <what>" or "MISMATCH <what>: <details>", and
exits 0 when everything matches, 1 on any mismatch, 2 when an input cannot be parsed.
NICs are matched by name (nvidia-smi's NIC legend against our NIC names), GPUs by index
(both order GPUs by PCI address; --bus-ids checks that). The "GPU NUMA ID" column is not
compared: commlens does not read it. Python 3 standard library only.
"""

import argparse
import json
import re
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")


class ParseError(Exception):
    pass


def read_lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return [ANSI.sub("", line.rstrip("\n")) for line in f]


def parse_topo_m(lines):
    """Returns (labels, cells, affinity, nic_names).

    labels: device labels of the header, in order ("GPU0", ..., "NIC0", ...).
    cells: {(row, column): "NV18" | "PIX" | ...}, self cells as "X".
    affinity: {"GPU0": (cpu affinity, numa affinity)} when the columns exist.
    nic_names: {"NIC0": "mlx5_0"} from the NIC legend (old versions name NICs in the
    header directly; those names map to themselves).
    """
    header = None
    for i, line in enumerate(lines):
        tokens = line.split()
        if tokens and tokens[0] == "GPU0":
            header = i
            break
    if header is None:
        raise ParseError("no header line starting with GPU0")
    # Device labels run up to the "CPU Affinity" column (old versions name NICs in the
    # header, "mlx5_0", instead of NIC0 plus a legend).
    tokens = lines[header].split()
    labels = []
    for token in tokens:
        if token == "CPU":
            break
        labels.append(token)
    has_cpu = "CPU Affinity" in lines[header]
    has_numa = "NUMA Affinity" in lines[header]
    cells, affinity = {}, {}
    for line in lines[header + 1:]:
        row = line.split()
        if not row or row[0] not in labels:
            if row and row[0].startswith("Legend"):
                break
            continue
        values = row[1:1 + len(labels)]
        if len(values) != len(labels):
            raise ParseError("row %s has %d cells, expected %d" % (row[0], len(values), len(labels)))
        for column, value in zip(labels, values):
            cells[(row[0], column)] = value
        rest = row[1 + len(labels):]
        if row[0].startswith("GPU") and has_cpu and rest:
            affinity[row[0]] = (rest[0], rest[1] if has_numa and len(rest) > 1 else None)
    nic_names = {label: label for label in labels if not label.startswith(("GPU", "NIC"))}
    for line in lines:
        m = re.match(r"^\s*(NIC\d+):\s*(\S+)\s*$", line)
        if m:
            nic_names[m.group(1)] = m.group(2)
    for label in labels:
        if label.startswith("NIC") and label not in nic_names:
            raise ParseError("%s has no entry in the NIC legend" % label)
    return labels, cells, affinity, nic_names


def parse_p2p(lines):
    """Returns {(row, column): code} of nvidia-smi topo -p2p r|w."""
    header = None
    for i, line in enumerate(lines):
        tokens = line.split()
        if tokens and tokens[0] == "GPU0" and all(t.startswith("GPU") for t in tokens):
            header = i
            break
    if header is None:
        raise ParseError("no p2p header line")
    labels = lines[header].split()
    cells = {}
    for line in lines[header + 1:]:
        row = line.split()
        if not row or row[0] not in labels:
            continue
        if len(row) < 1 + len(labels):
            raise ParseError("p2p row %s is short" % row[0])
        for column, value in zip(labels, row[1:1 + len(labels)]):
            cells[(row[0], column)] = value
    return labels, cells


def normalize_bdf(text):
    m = re.match(r"^\s*([0-9a-fA-F]+):([0-9a-fA-F]+):([0-9a-fA-F]+)\.([0-7])\s*$", text)
    if not m:
        return text.strip().lower()
    return "%04x:%02x:%02x.%s" % (int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16), m.group(4))


class Report:
    def __init__(self):
        self.mismatches = 0

    def result(self, what, problems):
        if problems:
            self.mismatches += 1
            shown = problems[:12]
            more = "" if len(problems) <= 12 else " (and %d more)" % (len(problems) - 12)
            print("MISMATCH %s: %s%s" % (what, "; ".join(shown), more))
        else:
            print("MATCH %s" % what)


def compare_topo_m(doc, path, report):
    labels, cells, affinity, nic_names = parse_topo_m(read_lines(path))
    ours_labels = doc["matrix"]["labels"]
    ours = {}
    for r, row in enumerate(doc["matrix"]["cells"]):
        for c, value in enumerate(row):
            ours[(ours_labels[r], ours_labels[c])] = value
    # Identify every device by a key both sides share: "GPU<i>" or the NIC's name.
    our_nic_name = {nic["label"]: nic["name"] for nic in doc["nics"] if nic.get("label")}
    def key(label, names):
        return label if label.startswith("GPU") else names.get(label, label)
    theirs_keys = {key(l, nic_names): l for l in labels}
    ours_keys = {key(l, our_nic_name): l for l in ours_labels}
    problems = []
    for k in sorted(set(theirs_keys) - set(ours_keys)):
        problems.append("nvidia-smi shows %s, commlens does not" % k)
    for k in sorted(set(ours_keys) - set(theirs_keys)):
        problems.append("commlens shows %s, nvidia-smi does not" % k)
    report.result("topo -m devices", problems)
    problems = []
    common = [k for k in theirs_keys if k in ours_keys]
    for a in common:
        for b in common:
            want = cells.get((theirs_keys[a], theirs_keys[b]))
            got = ours.get((ours_keys[a], ours_keys[b]))
            if want != got:
                problems.append("%s-%s nvidia-smi %s commlens %s" % (a, b, want, got))
    report.result("topo -m matrix", problems)
    problems = []
    for gpu in doc["gpus"]:
        label = gpu["label"]
        if label not in affinity:
            continue
        cpus, numa = affinity[label]
        our_cpus = gpu["pci"]["cpu_affinity"] or "N/A"
        our_numa = gpu.get("numa_affinity") or (
            "N/A" if gpu["pci"]["numa_node"] is None else str(gpu["pci"]["numa_node"]))
        if cpus != our_cpus:
            problems.append("%s CPU affinity nvidia-smi %s commlens %s" % (label, cpus, our_cpus))
        if numa is not None and numa != our_numa:
            problems.append("%s NUMA affinity nvidia-smi %s commlens %s" % (label, numa, our_numa))
    report.result("topo -m CPU and NUMA affinity", problems)


def compare_p2p(doc, path, kind, report):
    labels, cells = parse_p2p(read_lines(path))
    ours = doc["p2p"][kind]
    problems = []
    if len(labels) != len(ours):
        problems.append("nvidia-smi has %d GPUs, commlens %d" % (len(labels), len(ours)))
    for i in range(min(len(labels), len(ours))):
        for j in range(min(len(labels), len(ours))):
            want = cells.get(("GPU%d" % i, "GPU%d" % j))
            if want != ours[i][j]:
                problems.append("GPU%d-GPU%d nvidia-smi %s commlens %s" % (i, j, want, ours[i][j]))
    report.result("topo -p2p %s" % kind[0], problems)


def compare_bus_ids(doc, path, report):
    theirs = {}
    for line in read_lines(path):
        parts = [p.strip() for p in line.split(",")]
        if len(parts) >= 2 and parts[0].isdigit():
            theirs[int(parts[0])] = normalize_bdf(parts[1])
    ours = {i: gpu["pci"]["bdf"] for i, gpu in enumerate(doc["gpus"])}
    problems = ["GPU%d nvidia-smi %s commlens %s" % (i, theirs.get(i), ours.get(i))
                for i in sorted(set(theirs) | set(ours)) if theirs.get(i) != ours.get(i)]
    report.result("GPU order (PCI bus ids)", problems)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topo-json", required=True)
    parser.add_argument("--topo-m", required=True)
    parser.add_argument("--p2p-r", required=True)
    parser.add_argument("--p2p-w", required=True)
    parser.add_argument("--bus-ids")
    args = parser.parse_args(argv)
    try:
        with open(args.topo_json, encoding="utf-8") as f:
            doc = json.load(f)
        report = Report()
        if args.bus_ids:
            compare_bus_ids(doc, args.bus_ids, report)
        compare_topo_m(doc, args.topo_m, report)
        compare_p2p(doc, args.p2p_r, "read", report)
        compare_p2p(doc, args.p2p_w, "write", report)
    except (OSError, ValueError, KeyError, ParseError) as e:
        print("ERROR cannot compare: %s" % e)
        return 2
    return 1 if report.mismatches else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
