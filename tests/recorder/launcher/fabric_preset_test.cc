// Fabric presets: the tables, the rule that a variable the user set is kept, the values
// that depend on the machine (library paths, HCA names) and the checks' messages, on fake
// machines (topo's p5.48xlarge with 32 EFA devices, a four-GPU InfiniBand box) and fake
// library folders.
#include "recorder/launcher/fabric_preset.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "recorder/launcher/fabric_facts.h"
#include "recorder/launcher/nccl_version.h"
#include "recorder/launcher/preset_checks.h"
#include "topo/fake_machine.h"
#include "topo/nic_discovery.h"

namespace commlens::recorder::launcher {
namespace {

namespace fs = std::filesystem;
using topo::testing::TempDir;

void Touch(const fs::path& p) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << "";
}

// A machine from a topo spec, with aws-ofi-nccl, libfabric and GDRCopy in a library folder.
class Fabric : public ::testing::Test {
 protected:
  // The machines' trees are built once for all tests (the p5 has 32 EFA devices).
  static void SetUpTestSuite() { machines_ = new TempDir(); }
  static void TearDownTestSuite() {
    delete machines_;
    machines_ = nullptr;
  }
  FabricFacts Facts(const std::string& spec, int nccl_code = NcclVersionCode(2, 28, 9)) {
    fs::path root = machines_->path() / spec;
    if (!fs::exists(root)) {
      auto machine = topo::testing::BuildFakeMachine(topo::testing::ReadSpec(spec), root);
      EXPECT_TRUE(machine.ok()) << machine.status().message();
    }
    FactsOptions options;
    options.sysfs_root = root.string();
    options.nccl_library = "";  // not the build machine's NCCL
    FabricFacts facts = GatherFabricFacts(Environment(), options);
    facts.library_dirs = {lib_.string()};
    facts.nccl_probed = true;
    facts.nccl.found = nccl_code > 0;
    facts.nccl.version_code = nccl_code;
    facts.nccl.path = "/usr/lib/libnccl.so.2";
    facts.nccl.error = "libnccl.so.2: cannot open shared object file: No such file or directory";
    return facts;
  }
  void SetUp() override {
    lib_ = dir_.path() / "lib";
    for (const char* f :
         {"libnccl-net-ofi.so", "libnccl-ofi-tuner.so", "libfabric.so.1", "libgdrapi.so.2"})
      Touch(lib_ / f);
  }
  const PresetCheck* Find(const PresetPlan& plan, const std::string& part) {
    for (const PresetCheck& c : plan.checks)
      if (c.text.find(part) != std::string::npos) return &c;
    return nullptr;
  }
  std::string Lib(const char* file) { return (lib_ / file).string(); }

  static TempDir* machines_;
  TempDir dir_;
  fs::path lib_;
};
TempDir* Fabric::machines_ = nullptr;

std::vector<std::string> Names(const std::vector<PresetVariable>& table) {
  std::vector<std::string> out;
  for (const PresetVariable& v : table) out.push_back(v.name);
  return out;
}

TEST(PresetTables, WhatEachPresetSets) {
  EXPECT_EQ(Names(PresetTable(Preset::kEfa)),
            (std::vector<std::string>{"FI_PROVIDER", "FI_EFA_USE_DEVICE_RDMA", "FI_EFA_FORK_SAFE",
                                      "NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN", "NCCL_BUFFSIZE",
                                      "NCCL_P2P_NET_CHUNKSIZE"}));
  std::vector<std::string> gin = Names(PresetTable(Preset::kEfa));
  gin.push_back("DEEP_EP_BACKEND");
  gin.push_back("NCCL_GIN_TYPE");
  EXPECT_EQ(Names(PresetTable(Preset::kEfaGin)), gin);
  EXPECT_EQ(Names(PresetTable(Preset::kIb)), (std::vector<std::string>{"NCCL_IB_HCA"}));
  for (Preset p : {Preset::kEfa, Preset::kIb, Preset::kEfaGin}) {
    EXPECT_EQ(ParsePreset(PresetName(p)), p);
    for (const PresetVariable& v : PresetTable(p)) EXPECT_NE(std::string(v.why), "") << v.name;
  }
  EXPECT_FALSE(ParsePreset("roce"));
}

TEST_F(Fabric, EfaOnP5SetsEverythingAndChecksOut) {
  PresetPlan plan = PlanPreset(Preset::kEfa, Environment(), Facts("p5_48xlarge"));
  std::map<std::string, std::string> set;
  for (const auto& s : plan.set) set[s.name] = s.value;
  EXPECT_EQ(set,
            (std::map<std::string, std::string>{{"FI_PROVIDER", "efa"},
                                                {"FI_EFA_USE_DEVICE_RDMA", "1"},
                                                {"FI_EFA_FORK_SAFE", "1"},
                                                {"NCCL_NET_PLUGIN", Lib("libnccl-net-ofi.so")},
                                                {"NCCL_TUNER_PLUGIN", Lib("libnccl-ofi-tuner.so")},
                                                {"NCCL_BUFFSIZE", "8388608"},
                                                {"NCCL_P2P_NET_CHUNKSIZE", "524288"}}));
  EXPECT_TRUE(plan.kept.empty());
  EXPECT_FALSE(plan.HasError());
  std::vector<std::string> texts;
  for (const PresetCheck& c : plan.checks)
    texts.push_back(std::string(CheckLevelName(c.level)) + ": " + c.text);
  EXPECT_EQ(texts, (std::vector<std::string>{
                       "ok: 32 EFA port(s) active: rdmap20s0:1, rdmap21s0:1, rdmap22s0:1, "
                       "rdmap23s0:1, rdmap52s0:1, "
                       "rdmap53s0:1, rdmap54s0:1, rdmap55s0:1, ... (32 in all)",
                       "ok: aws-ofi-nccl: " + Lib("libnccl-net-ofi.so"),
                       "ok: aws-ofi-nccl's tuner: " + Lib("libnccl-ofi-tuner.so"),
                       "ok: libfabric: " + Lib("libfabric.so.1"),
                       "ok: NCCL 2.28.9 (/usr/lib/libnccl.so.2)",
                   }));
  Environment env;
  ApplyPreset(plan, &env);
  EXPECT_STREQ(env.Get("FI_PROVIDER"), "efa");
}

TEST_F(Fabric, WhatTheUserSetIsKept) {
  Environment mine(
      {"FI_EFA_FORK_SAFE=0", "NCCL_BUFFSIZE=4194304", "NCCL_TUNER_PLUGIN=/opt/my/tuner.so"});
  PresetPlan plan = PlanPreset(Preset::kEfa, mine, Facts("p5_48xlarge"));
  ASSERT_EQ(plan.kept.size(), 3u);
  EXPECT_EQ(plan.kept[0].name, "FI_EFA_FORK_SAFE");
  EXPECT_EQ(plan.kept[0].user_value, "0");
  EXPECT_EQ(plan.kept[0].preset_value, "1");
  EXPECT_EQ(plan.kept[1].name, "NCCL_TUNER_PLUGIN");
  EXPECT_EQ(plan.kept[2].name, "NCCL_BUFFSIZE");
  for (const auto& s : plan.set)
    EXPECT_TRUE(s.name != "FI_EFA_FORK_SAFE" && s.name != "NCCL_BUFFSIZE") << s.name;
  Environment env = mine;
  ApplyPreset(plan, &env);
  EXPECT_STREQ(env.Get("FI_EFA_FORK_SAFE"), "0");
  EXPECT_STREQ(env.Get("NCCL_BUFFSIZE"), "4194304");
  // The user's tuner is checked as the job will have it: it does not exist.
  const PresetCheck* tuner = Find(plan, "NCCL_TUNER_PLUGIN=/opt/my/tuner.so");
  ASSERT_NE(tuner, nullptr);
  EXPECT_EQ(tuner->level, CheckLevel::kWarning);
  EXPECT_EQ(tuner->text, "NCCL_TUNER_PLUGIN=/opt/my/tuner.so: no such library in " + lib_.string());

  std::string shell = PresetAsShell(plan);
  EXPECT_NE(shell.find("export FI_PROVIDER=efa  # libfabric: the EFA provider\n"),
            std::string::npos)
      << shell;
  EXPECT_NE(shell.find("# kept FI_EFA_FORK_SAFE=0 (already set; the preset would set 1)\n"),
            std::string::npos);
  EXPECT_NE(
      shell.find("# kept NCCL_BUFFSIZE=4194304 (already set; the preset would set 8388608)\n"),
      std::string::npos);
  EXPECT_EQ(shell.find("export FI_EFA_FORK_SAFE"), std::string::npos);
  EXPECT_NE(shell.find("# warning: NCCL_TUNER_PLUGIN=/opt/my/tuner.so: no such library in"),
            std::string::npos);

  std::string log = PresetAsLog(plan, "commlens record: ", false);
  EXPECT_EQ(
      log.substr(0, log.find('\n')),
      "commlens record: preset efa: set FI_PROVIDER=efa FI_EFA_USE_DEVICE_RDMA=1 NCCL_NET_PLUGIN=" +
          Lib("libnccl-net-ofi.so") +
          " NCCL_P2P_NET_CHUNKSIZE=524288; kept FI_EFA_FORK_SAFE=0 (not 1), "
          "NCCL_TUNER_PLUGIN=/opt/my/tuner.so "
          "(not " +
          Lib("libnccl-ofi-tuner.so") + "), NCCL_BUFFSIZE=4194304 (not 8388608)");
  EXPECT_NE(log.find("commlens record: preset efa: warning: NCCL_TUNER_PLUGIN"), std::string::npos);
  EXPECT_EQ(log.find(": ok: "), std::string::npos);  // only warnings and errors unless asked
  EXPECT_NE(PresetAsLog(plan, "", true).find("preset efa: ok: aws-ofi-nccl: "), std::string::npos);
}

TEST_F(Fabric, EfaWithoutAwsOfiNccl) {
  FabricFacts facts = Facts("p5_48xlarge");
  facts.library_dirs.clear();
  PresetPlan plan = PlanPreset(Preset::kEfa, Environment(), facts);
  std::map<std::string, std::string> set;
  for (const auto& s : plan.set) set[s.name] = s.value;
  EXPECT_EQ(set["NCCL_NET_PLUGIN"], "ofi");  // NCCL's own search may still find libnccl-net-ofi.so
  EXPECT_EQ(set.count("NCCL_TUNER_PLUGIN"), 0u);
  EXPECT_TRUE(plan.HasError());
  const PresetCheck* net = Find(plan, "NCCL_NET_PLUGIN=ofi");
  ASSERT_NE(net, nullptr);
  EXPECT_EQ(net->level, CheckLevel::kError);
  EXPECT_EQ(net->text,
            "NCCL_NET_PLUGIN=ofi: no such library in any library folder; NCCL falls back to its "
            "own transports (TCP "
            "sockets on EFA)");
  const PresetCheck* tuner = Find(plan, "tuner");
  ASSERT_NE(tuner, nullptr);
  EXPECT_EQ(tuner->level, CheckLevel::kWarning);
  EXPECT_EQ(tuner->text,
            "aws-ofi-nccl's tuner (libnccl-ofi-tuner.so) is not in any library folder; "
            "NCCL_TUNER_PLUGIN is not set");
  EXPECT_EQ(Find(plan, "libfabric")->level, CheckLevel::kWarning);
}

TEST_F(Fabric, EfaOnAnInfiniBandMachineIsAnError) {
  PresetPlan plan = PlanPreset(Preset::kEfa, Environment(), Facts("four_gpu_ib"));
  const PresetCheck* c = Find(plan, "EFA");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->level, CheckLevel::kError);
  EXPECT_EQ(c->text,
            "no EFA device: none in /sys/class/infiniband; this is not an EFA-enabled instance, or "
            "the efa driver is "
            "not loaded");
  Environment socket({"FI_PROVIDER=tcp"});
  PresetPlan kept = PlanPreset(Preset::kEfa, socket, Facts("p5_48xlarge"));
  EXPECT_EQ(Find(kept, "FI_PROVIDER")->text, "FI_PROVIDER=tcp is kept: libfabric will not use EFA");
}

TEST_F(Fabric, GinNeedsARecentEnoughNccl) {
  struct Case {
    int code;
    CheckLevel level;
    std::string text;
  };
  for (const Case& c :
       {Case{NcclVersionCode(2, 27, 7), CheckLevel::kError,
             "NCCL 2.27.7 has no GIN: GPU-initiated networking came with NCCL 2.28.7's device API"},
        Case{NcclVersionCode(2, 28, 9), CheckLevel::kWarning,
             "NCCL 2.28.9 has GIN, but only over its own InfiniBand transport: GIN over EFA needs "
             "NCCL "
             "2.31.2 and aws-ofi-nccl 1.21 or later"},
        Case{NcclVersionCode(2, 31, 2), CheckLevel::kOk,
             "NCCL 2.31.2 has GIN over network plugins (with aws-ofi-nccl 1.21 or later)"}}) {
    PresetPlan plan = PlanPreset(Preset::kEfaGin, Environment(), Facts("p5_48xlarge", c.code));
    const PresetCheck* gin = Find(plan, "GIN");
    ASSERT_NE(gin, nullptr) << c.text;
    EXPECT_EQ(gin->level, c.level);
    EXPECT_EQ(gin->text, c.text);
    EXPECT_EQ(Find(plan, "GDRCopy")->level, CheckLevel::kOk);
  }
  // NCCL not found: said plainly, and GIN is not judged.
  PresetPlan plan = PlanPreset(Preset::kEfaGin, Environment(), Facts("p5_48xlarge", 0));
  const PresetCheck* nccl = Find(plan, "NCCL not found");
  ASSERT_NE(nccl, nullptr);
  EXPECT_EQ(nccl->level, CheckLevel::kWarning);
  EXPECT_EQ(nccl->text,
            "NCCL not found (libnccl.so.2: cannot open shared object file: No such file or "
            "directory); its version is "
            "not checked. PyTorch wheels carry their own NCCL in site-packages/nvidia/nccl/lib: "
            "name it with "
            "--nccl-lib");
  EXPECT_EQ(Find(plan, "has GIN"), nullptr);
  EXPECT_EQ(Find(plan, "has no GIN"), nullptr);
  // The user's GIN type is kept and named.
  PresetPlan gda =
      PlanPreset(Preset::kEfaGin, Environment({"NCCL_GIN_TYPE=5"}), Facts("p5_48xlarge", 23102));
  EXPECT_EQ(Find(gda, "NCCL_GIN_TYPE=5")->level, CheckLevel::kNote);
  EXPECT_EQ(gda.kept.size(), 1u);
}

TEST_F(Fabric, InfiniBandNamesTheActivePorts) {
  PresetPlan plan = PlanPreset(Preset::kIb, Environment(), Facts("four_gpu_ib"));
  ASSERT_EQ(plan.set.size(), 1u);
  EXPECT_EQ(plan.set[0].name, "NCCL_IB_HCA");
  EXPECT_EQ(plan.set[0].value, "=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1");
  EXPECT_FALSE(plan.HasError());
  EXPECT_EQ(Find(plan, "port(s) active")->text,
            "4 InfiniBand/RoCE port(s) active: mlx5_0:1, mlx5_1:1, mlx5_2:1, mlx5_3:1");
  EXPECT_EQ(Find(plan, "nvidia_peermem")->level, CheckLevel::kNote);
  EXPECT_NE(PresetAsShell(plan).find("export NCCL_IB_HCA==mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1  #"),
            std::string::npos);

  PresetPlan off = PlanPreset(Preset::kIb, Environment({"NCCL_IB_DISABLE=1", "NCCL_IB_HCA=mlx5_0"}),
                              Facts("four_gpu_ib"));
  EXPECT_TRUE(off.set.empty());
  ASSERT_EQ(off.kept.size(), 1u);
  EXPECT_EQ(off.kept[0].user_value, "mlx5_0");
  EXPECT_EQ(Find(off, "NCCL_IB_DISABLE")->text,
            "NCCL_IB_DISABLE=1 is kept: NCCL will not use InfiniBand");
  EXPECT_TRUE(off.HasError());

  PresetPlan efa_box = PlanPreset(Preset::kIb, Environment(), Facts("p5_48xlarge"));
  EXPECT_TRUE(efa_box.set.empty());  // no port to name
  EXPECT_EQ(Find(efa_box, "no active")->text,
            "no active InfiniBand or RoCE port: none in /sys/class/infiniband");
}

TEST(PluginValues, ResolvedAsNcclDoes) {
  TempDir dir;
  Touch(dir.path() / "libnccl-net-ofi.so");
  Touch(dir.path() / "libnccl-tuner-x.so");
  std::vector<std::string> dirs = {(dir.path() / "missing").string(), dir.path().string()};
  EXPECT_EQ(ResolvePluginValue(dirs, "net", "ofi"), (dir.path() / "libnccl-net-ofi.so").string());
  EXPECT_EQ(ResolvePluginValue(dirs, "net", "libnccl-net-ofi.so"),
            (dir.path() / "libnccl-net-ofi.so").string());
  EXPECT_EQ(ResolvePluginValue(dirs, "tuner", "x"), (dir.path() / "libnccl-tuner-x.so").string());
  EXPECT_EQ(ResolvePluginValue(dirs, "tuner", "ofi"), "");
  const std::string full = (dir.path() / "libnccl-net-ofi.so").string();
  EXPECT_EQ(ResolvePluginValue({}, "net", full), full);
  EXPECT_EQ(ResolvePluginValue({}, "net", "/nowhere/libnccl-net.so"), "");
}

TEST(LibraryDirs, LdLibraryPathThenLdSoConf) {
  TempDir root;
  fs::create_directories(root.path() / "etc/ld.so.conf.d");
  std::ofstream(root.path() / "etc/ld.so.conf") << "include /etc/ld.so.conf.d/*.conf\n";
  std::ofstream(root.path() / "etc/ld.so.conf.d/efa.conf")
      << "# EFA\n/opt/amazon/efa/lib\n\n/opt/missing\n";
  fs::create_directories(root.path() / "opt/amazon/efa/lib");
  fs::create_directories(root.path() / "opt/mine");
  fs::create_directories(root.path() / "usr/lib");
  Environment env({"LD_LIBRARY_PATH=/opt/mine::/opt/amazon/efa/lib/"});
  std::vector<std::string> dirs = LibraryDirs(env, root.path().string());
  ASSERT_GE(dirs.size(), 3u);
  EXPECT_EQ(dirs[0], "/opt/mine");
  EXPECT_EQ(dirs[1], "/opt/amazon/efa/lib");  // once, at its first place
  EXPECT_EQ(std::count(dirs.begin(), dirs.end(), "/opt/amazon/efa/lib"), 1);
  EXPECT_EQ(std::count(dirs.begin(), dirs.end(), "/opt/missing"), 0);
  EXPECT_EQ(std::count(dirs.begin(), dirs.end(), "/usr/lib"), 1);
}

TEST(NcclVersion, CodesAndTheRealDlopenPath) {
  EXPECT_EQ(NcclVersionCode(2, 31, 2), 23102);
  EXPECT_EQ(NcclVersionText(22809), "2.28.9");
  EXPECT_EQ(NcclVersionText(2708), "2.7.8");  // the old scheme
  NcclLibrary missing = ProbeNccl("/nonexistent/libnccl.so.2");
  EXPECT_FALSE(missing.found);
  EXPECT_NE(missing.error.find("/nonexistent/libnccl.so.2"), std::string::npos) << missing.error;
  NcclLibrary fake = ProbeNccl(FAKE_NCCL);
  ASSERT_TRUE(fake.found) << fake.error;
  EXPECT_EQ(fake.version_code, 22809);
  EXPECT_EQ(fake.path, fs::canonical(FAKE_NCCL).string());
}

}  // namespace
}  // namespace commlens::recorder::launcher
