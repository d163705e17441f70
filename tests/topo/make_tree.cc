// topo_make_tree SPEC_NAME DIR: writes the fake sysfs tree of tests/topo/data/SPEC_NAME.spec
// under DIR (for the Python tool tests, which need a tree to snapshot).
#include <cstdio>

#include "topo/fake_machine.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: topo_make_tree SPEC_NAME DIR\n");
    return 2;
  }
  auto machine = commlens::topo::testing::BuildFakeMachine(commlens::topo::testing::ReadSpec(argv[1]), argv[2]);
  if (!machine.ok()) {
    std::fprintf(stderr, "topo_make_tree: %s\n", machine.status().message().c_str());
    return 1;
  }
  return 0;
}
