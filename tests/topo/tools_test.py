#!/usr/bin/env python3
"""CTest driver for the topo tools the device script uses.

    tools_test.py --commlens BIN --make-tree BIN

1. sysfs_snapshot.py on the fake machines: `commlens topo --sysfs-root` reads the
   snapshot exactly as it reads the tree it was taken from.
2. nvsmi_compare.py on nvidia-smi-shaped samples of the 4-GPU machine (tab separated,
   ANSI-underlined header): MATCH against its golden JSON, MISMATCH (exit 1) when a cell
   or a P2P code differs, exit 2 on unparseable input.
3. scripts/device/topo.sh as a dry run (fake tree, recorded GPU facts, fake nvidia-smi):
   exit 0 and every comparison MATCH; exit 1 when nvidia-smi disagrees.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SAMPLES = os.path.join(HERE, "data", "nvsmi")
GOLDEN = os.path.join(HERE, "data", "golden")
failures = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what)
    if not condition:
        failures.append(what)


def run(cmd, **kwargs):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120, **kwargs)


def commlens_json(commlens, *args):
    out = run([commlens, "topo", "--json", "-"] + list(args))
    return out.returncode, json.loads(out.stdout) if out.returncode == 0 else None


def test_snapshot(tmp, commlens, make_tree):
    for spec in ("four_gpu_ib", "p5_48xlarge"):
        tree = os.path.join(tmp, spec + "_tree")
        snap = os.path.join(tmp, spec + "_snap")
        check(run([make_tree, spec, tree]).returncode == 0, "%s: fake tree built" % spec)
        out = run([sys.executable, os.path.join(HERE, "sysfs_snapshot.py"), "--root", tree, "--out", snap])
        check(out.returncode == 0, "%s: snapshot taken (%s)" % (spec, out.stdout.strip()))
        rc_tree, from_tree = commlens_json(commlens, "--sysfs-root", tree)
        rc_snap, from_snap = commlens_json(commlens, "--sysfs-root", snap)
        check(rc_tree == 0 and rc_snap == 0, "%s: commlens reads tree and snapshot" % spec)
        check(from_tree is not None and from_tree == from_snap, "%s: snapshot reads the same as the tree" % spec)


def compare(topo_json, topo_m, p2p_r, p2p_w):
    return run([sys.executable, os.path.join(HERE, "nvsmi_compare.py"), "--topo-json", topo_json,
                "--topo-m", topo_m, "--p2p-r", p2p_r, "--p2p-w", p2p_w,
                "--bus-ids", os.path.join(SAMPLES, "four_gpu_ib_bus_ids.txt")])


def sample(name):
    return os.path.join(SAMPLES, "four_gpu_ib_" + name + ".txt")


def mutated(tmp, name, old, new):
    with open(sample(name)) as f:
        text = f.read()
    assert old in text, old
    path = os.path.join(tmp, "mutated_" + name + ".txt")
    with open(path, "w") as f:
        f.write(text.replace(old, new, 1))
    return path


def test_compare(tmp):
    golden = os.path.join(GOLDEN, "four_gpu_ib.json")
    out = compare(golden, sample("topo_m"), sample("p2p_r"), sample("p2p_w"))
    check(out.returncode == 0 and out.stdout.count("MATCH") == 6 and "MISMATCH" not in out.stdout,
          "compare: samples match the golden\n" + out.stdout)
    bad_cell = mutated(tmp, "topo_m", "GPU2\tSYS\tSYS\t X \tNV12", "GPU2\tSYS\tSYS\t X \tNV6")
    out = compare(golden, bad_cell, sample("p2p_r"), sample("p2p_w"))
    check(out.returncode == 1 and "MISMATCH topo -m matrix: GPU2-GPU3 nvidia-smi NV6 commlens NV12" in out.stdout,
          "compare: a changed matrix cell is a mismatch\n" + out.stdout)
    bad_nic = mutated(tmp, "topo_m", "NIC3: mlx5_3", "NIC3: mlx5_7")
    out = compare(golden, bad_nic, sample("p2p_r"), sample("p2p_w"))
    check(out.returncode == 1 and "nvidia-smi shows mlx5_7, commlens does not" in out.stdout,
          "compare: a NIC of another name is a mismatch\n" + out.stdout)
    bad_p2p = mutated(tmp, "p2p_w", " GPU0\tX\tOK", " GPU0\tX\tNS")
    out = compare(golden, sample("topo_m"), sample("p2p_r"), bad_p2p)
    check(out.returncode == 1 and "MISMATCH topo -p2p w: GPU0-GPU1 nvidia-smi NS commlens OK" in out.stdout
          and "MATCH topo -p2p r" in out.stdout, "compare: a changed P2P code is a mismatch\n" + out.stdout)
    empty = os.path.join(tmp, "empty.txt")
    open(empty, "w").close()
    out = compare(golden, empty, sample("p2p_r"), sample("p2p_w"))
    check(out.returncode == 2 and "ERROR" in out.stdout, "compare: unparseable input exits 2\n" + out.stdout)


def fake_nvidia_smi(tmp, topo_m):
    path = os.path.join(tmp, "fake_nvidia_smi_%d.sh" % len(os.listdir(tmp)))
    with open(path, "w") as f:
        f.write('#!/bin/sh\ncase "$*" in\n'
                '  "topo -m") cat "%s" ;;\n'
                '  "topo -p2p r") cat "%s" ;;\n'
                '  "topo -p2p w") cat "%s" ;;\n'
                '  --query-gpu*) cat "%s" ;;\n'
                '  *) echo "fake nvidia-smi: $*" >&2; exit 1 ;;\nesac\n'
                % (topo_m, sample("p2p_r"), sample("p2p_w"), sample("bus_ids")))
    os.chmod(path, 0o755)
    return path


def test_device_script(tmp, commlens, make_tree):
    tree = os.path.join(tmp, "device_tree")
    run([make_tree, "four_gpu_ib", tree])
    for name, topo_m, want_rc in (("match", sample("topo_m"), 0),
                                  ("mismatch", mutated(tmp, "topo_m", "GPU0\t X \tNV12", "GPU0\t X \tNV4"), 1)):
        out_dir = os.path.join(tmp, "out_" + name)
        env = dict(os.environ, OUT=out_dir, COMMLENS_BIN=commlens, COMMLENS_TOPO_SYSFS_ROOT=tree,
                   COMMLENS_TOPO_GPU_FACTS=os.path.join(GOLDEN, "four_gpu_ib.json"),
                   NVIDIA_SMI=fake_nvidia_smi(tmp, topo_m))
        out = run(["bash", os.path.join(REPO, "scripts", "device", "topo.sh")], env=env)
        check(out.returncode == want_rc, "device script (%s) exits %d\n%s" % (name, want_rc, out.stdout))
        files = sorted(os.listdir(os.path.join(out_dir, "topo")))
        check(files == ["topo_details.tar.gz", "topo_summary.txt"], "device script (%s) writes two files: %s" % (name, files))
        with tarfile.open(os.path.join(out_dir, "topo", "topo_details.tar.gz")) as tar:
            names = tar.getnames()
        check("./topo.json" in names and "./nvsmi_topo_m.txt" in names and
              any(n.startswith("./sysfs/sys/bus/pci/devices/") for n in names),
              "device script (%s) keeps the JSON, nvidia-smi outputs and the snapshot" % name)
        if want_rc == 0:
            check(out.stdout.count("MATCH") >= 7 and "MISMATCH" not in out.stdout,
                  "device script: all comparisons and the snapshot replay match")
        else:
            check("MISMATCH topo -m matrix" in out.stdout, "device script: the mismatch is reported")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--commlens", required=True)
    parser.add_argument("--make-tree", required=True)
    args = parser.parse_args()
    args.commlens = os.path.abspath(args.commlens)
    args.make_tree = os.path.abspath(args.make_tree)
    tmp = tempfile.mkdtemp(prefix="commlens_topo_tools_")
    try:
        test_snapshot(tmp, args.commlens, args.make_tree)
        test_compare(tmp)
        test_device_script(tmp, args.commlens, args.make_tree)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
