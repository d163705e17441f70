#include "recorder/launcher/fabric_facts.h"

#include <glob.h>
#include <sys/utsname.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "topo/nic_discovery.h"
#include "topo/sysfs_root.h"

namespace commlens::recorder::launcher {

namespace fs = std::filesystem;

namespace {

std::string Machine() {
  utsname u{};
  return uname(&u) == 0 ? u.machine : "x86_64";
}

// Folders named in an ld.so.conf file, following "include" lines (globs), |depth| deep.
void ReadLdSoConf(const fs::path& file, const fs::path& root, int depth,
                  std::vector<std::string>* out) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (size_t hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    size_t e = line.find_last_not_of(" \t\r");
    line = line.substr(b, e - b + 1);
    if (line.rfind("include", 0) == 0 && line.size() > 7 && (line[7] == ' ' || line[7] == '\t')) {
      if (depth <= 0) continue;
      std::string pattern = line.substr(line.find_first_not_of(" \t", 7));
      fs::path full =
          pattern.front() == '/' ? root / pattern.substr(1) : file.parent_path() / pattern;
      glob_t g{};
      if (glob(full.c_str(), 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) ReadLdSoConf(g.gl_pathv[i], root, depth - 1, out);
      globfree(&g);
    } else if (line.front() == '/') {
      out->push_back(line);
    }
  }
}

}  // namespace

std::vector<std::string> LibraryDirs(const Environment& env, const std::string& etc_root) {
  std::vector<std::string> candidates;
  if (const char* ld = env.Get("LD_LIBRARY_PATH")) {
    std::string_view rest = ld;
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      std::string_view dir = rest.substr(0, colon);
      if (!dir.empty()) candidates.emplace_back(dir);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  const fs::path root(etc_root);
  ReadLdSoConf(root / "etc/ld.so.conf", root, 4, &candidates);
  const std::string triplet = Machine() + "-linux-gnu";
  for (std::string dir :
       {"/lib/" + triplet, "/usr/lib/" + triplet, std::string("/lib64"), std::string("/usr/lib64"),
        std::string("/lib"), std::string("/usr/lib"), std::string("/usr/local/lib")})
    candidates.push_back(dir);
  // The AWS EFA installer's folders, and the aws-ofi-nccl install most images use.
  for (std::string dir :
       {std::string("/opt/amazon/ofi-nccl/lib"), "/opt/amazon/ofi-nccl/lib/" + triplet,
        std::string("/opt/amazon/efa/lib"), std::string("/opt/amazon/efa/lib64"),
        std::string("/opt/aws-ofi-nccl/lib")})
    candidates.push_back(dir);

  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const std::string& dir : candidates) {
    std::error_code ec;
    std::string normal = fs::path(dir).lexically_normal().string();
    if (normal.size() > 1 && normal.back() == '/') normal.pop_back();
    if (!seen.insert(normal).second) continue;
    if (fs::is_directory(etc_root == "/" ? fs::path(normal) : root / normal.substr(1), ec))
      out.push_back(normal);
  }
  return out;
}

FabricFacts GatherFabricFacts(const Environment& env, const FactsOptions& options) {
  FabricFacts facts;
  facts.library_dirs = LibraryDirs(env);
  topo::SysfsRoot root(options.sysfs_root);
  facts.rdma_nics = topo::ReadRdmaNics(root, &facts.sysfs_notes);
  facts.peermem_loaded = root.Exists("/sys/module/nvidia_peermem");
  if (!options.nccl_library.empty()) {
    facts.nccl_probed = true;
    facts.nccl = ProbeNccl(options.nccl_library);
  }
  return facts;
}

}  // namespace commlens::recorder::launcher
