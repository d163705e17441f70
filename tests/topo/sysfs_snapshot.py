#!/usr/bin/env python3
"""Copies the sysfs files `commlens topo` reads into a folder, symlinks included.

    sysfs_snapshot.py --out DIR [--root /]

DIR then has the real layout (DIR/sys/bus/pci/devices/<bdf> -> ../../../devices/...),
so `commlens topo --sysfs-root DIR` reads it exactly as it reads /sys, on any machine.
Copied: every PCI device's link and identity/NUMA/PCIe-link attributes (and its
driver link), /sys/class/infiniband (ports too), /sys/class/net, and the NUMA nodes.
Attributes that cannot be read (the speed of a down link answers EINVAL) are left out,
which commlens reads the same way. MAC addresses, GUIDs and counters are not copied.
Python 3 standard library only.
"""

import argparse
import os
import sys

PCI_ATTRS = ["class", "vendor", "device", "subsystem_vendor", "subsystem_device", "revision",
             "numa_node", "local_cpulist", "local_cpus", "current_link_speed", "max_link_speed",
             "current_link_width", "max_link_width"]
IB_ATTRS = ["node_type", "fw_ver", "hca_type", "board_id"]
PORT_ATTRS = ["state", "phys_state", "rate", "link_layer"]
NET_ATTRS = ["type", "operstate", "speed", "mtu", "carrier"]
NODE_ATTRS = ["cpulist", "meminfo", "distance"]


class Snapshot:
    def __init__(self, root, out):
        self.root = os.path.realpath(root)
        self.out = out
        self.files = 0
        self.links = 0

    def host(self, path):
        return os.path.join(self.root, path.lstrip("/"))

    def inside(self, host_path):
        """A real host path as seen inside the root, or None outside it."""
        rel = os.path.relpath(os.path.realpath(host_path), self.root)
        return None if rel.startswith("..") else "/" + rel

    def dest(self, path):
        return os.path.join(self.out, path.lstrip("/"))

    def copy_file(self, path):
        try:
            with open(self.host(path), "rb") as f:
                data = f.read(1 << 16)
        except OSError:
            return
        os.makedirs(os.path.dirname(self.dest(path)), exist_ok=True)
        with open(self.dest(path), "wb") as f:
            f.write(data)
        self.files += 1

    def copy_link(self, path):
        """Recreates the symlink |path| and the folder it points at; returns the target
        as seen inside the root (None when |path| is not a link)."""
        host = self.host(path)
        if not os.path.islink(host):
            return None
        target = self.inside(host)
        dest = self.dest(path)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        if not os.path.lexists(dest):
            os.symlink(os.readlink(host), dest)
            self.links += 1
        if target:
            os.makedirs(self.dest(target), exist_ok=True)
        return target

    def copy_attrs(self, folder, names):
        for name in names:
            self.copy_file(folder + "/" + name)

    def listdir(self, path):
        try:
            return sorted(os.listdir(self.host(path)))
        except OSError:
            return []

    def pci(self):
        for bdf in self.listdir("/sys/bus/pci/devices"):
            device = self.copy_link("/sys/bus/pci/devices/" + bdf)
            if not device:
                continue
            self.copy_attrs(device, PCI_ATTRS)
            self.copy_link(device + "/driver")

    def infiniband(self):
        if not os.path.isdir(self.host("/sys/class/infiniband")):
            return
        os.makedirs(self.dest("/sys/class/infiniband"), exist_ok=True)
        for name in self.listdir("/sys/class/infiniband"):
            folder = self.copy_link("/sys/class/infiniband/" + name)
            if not folder:
                continue
            self.copy_attrs(folder, IB_ATTRS)
            self.copy_link(folder + "/device")
            for port in self.listdir(folder + "/ports"):
                self.copy_attrs(folder + "/ports/" + port, PORT_ATTRS)

    def net(self):
        for name in self.listdir("/sys/class/net"):
            folder = self.copy_link("/sys/class/net/" + name)
            if not folder:
                continue
            self.copy_attrs(folder, NET_ATTRS)
            self.copy_link(folder + "/device")

    def nodes(self):
        base = "/sys/devices/system/node"
        self.copy_attrs(base, ["online", "possible", "has_cpu", "has_memory"])
        for name in self.listdir(base):
            if name.startswith("node") and name[4:].isdigit():
                self.copy_attrs(base + "/" + name, NODE_ATTRS)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder to create (must not exist)")
    parser.add_argument("--root", default="/", help="the tree to copy from (default /)")
    args = parser.parse_args(argv)
    if os.path.exists(args.out):
        print("sysfs_snapshot: %s exists" % args.out, file=sys.stderr)
        return 2
    os.makedirs(args.out)
    snap = Snapshot(args.root, args.out)
    snap.pci()
    snap.infiniband()
    snap.net()
    snap.nodes()
    print("sysfs_snapshot: %d files, %d links in %s" % (snap.files, snap.links, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
