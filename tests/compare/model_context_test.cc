#include "lockstep/compare/model_context.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "lockstep/compare/compare_dumps.h"
#include "lockstep/core/file.h"
#include "testing/test_dir.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
const std::string kMsprobe = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe";

void AddRows(CompareResult* r, std::vector<std::string> entries) {
  for (std::string& e : entries) {
    CompareRow row;
    row.entry = std::move(e);
    r->rows.push_back(std::move(row));
  }
}

int32_t Find(const CompareResult& r, const std::string& path) {
  for (size_t i = 0; i < r.modules.size(); ++i) {
    if (r.modules[i].path == path) return static_cast<int32_t>(i);
  }
  return -2;  // never a valid index or "none"
}

std::string ParentPath(const CompareResult& r, const std::string& path) {
  int32_t n = Find(r, path);
  if (n < 0) return "<no module " + path + ">";
  int32_t up = r.modules[n].parent;
  return up < 0 ? "" : r.modules[up].path;
}

ModuleParents Parents(std::vector<std::pair<std::string, std::string>> links) {
  ConstructMap map;
  for (auto& [k, v] : links) map[k] = v.empty() ? PyValue() : PyValue::Str(v);
  return ModuleParentsFrom(map, "construct.json");
}

TEST(ModuleTreeBuilderTest, RowsGoToTheirModuleAndModulesNest) {
  CompareResult r;
  ModuleTreeBuilder b(&r);
  AddRows(&r, {"Functional.conv2d.0.forward", "Functional.conv2d.0.forward",
               "Module.layer1.0.conv1.Conv2d.forward.0", "Tensor.add.0.forward",
               "Torch.sqrt.0.forward"});
  ModuleParents p = Parents({
      {"Functional.conv2d.0.forward", "Module.layer1.0.conv1.Conv2d.forward.0"},
      {"Module.layer1.0.conv1.Conv2d.forward.0",
       "Module.layer1.0.Bottleneck.forward.0"},
      {"Module.layer1.0.Bottleneck.forward.0",
       "Module.layer1.Sequential.forward.0"},
      {"Module.layer1.Sequential.forward.0", ""},
      {"Tensor.add.0.forward", ""},
      {"Torch.sqrt.0.forward", "optimizer"},
  });
  b.AddRows(&p, 0);
  // A second rank pair without construct.json: parents from the paths.
  AddRows(&r, {"Module.layer2.0.conv.Conv2d.forward.0",
               "Module.layer2.Seq.backward.0", "Functional.relu.0.forward"});
  b.AddRows(nullptr, 5);
  b.Finish();
  int32_t conv1 = Find(r, "layer1.0.conv1");
  ASSERT_GE(conv1, 0);
  EXPECT_EQ(r.modules[conv1].cls, "Conv2d");
  EXPECT_EQ(r.rows[0].module, conv1);
  EXPECT_EQ(r.rows[1].module, conv1);
  EXPECT_EQ(r.rows[2].module, conv1);
  EXPECT_EQ(r.rows[3].module, -1);
  EXPECT_EQ(r.rows[4].module, Find(r, "optimizer"));
  EXPECT_EQ(r.rows[7].module, -1);
  EXPECT_EQ(ParentPath(r, "layer1.0.conv1"), "layer1.0");
  EXPECT_EQ(ParentPath(r, "layer1.0"), "layer1");
  EXPECT_EQ(ParentPath(r, "layer1"), "");
  EXPECT_EQ(r.modules[Find(r, "layer1.0")].cls, "Bottleneck");
  EXPECT_EQ(ParentPath(r, "optimizer"), "");
  EXPECT_EQ(ParentPath(r, "layer2.0.conv"), "layer2");  // longest prefix
  EXPECT_EQ(r.modules.size(), 6u);  // calls and directions are one node
}

// lockstep's probe gives backward entries no parent: an operator's backward
// goes to the module of its forward call; a parent given wins.
TEST(ModuleTreeBuilderTest, AnOperatorsBackwardGoesToItsForwardsModule) {
  CompareResult r;
  ModuleTreeBuilder b(&r);
  AddRows(&r, {"Functional.linear.0.forward", "Functional.linear.0.backward",
               "Functional.relu.0.backward", "Torch.sum.0.backward"});
  ModuleParents p = Parents({
      {"Functional.linear.0.forward", "Module.fc.Linear.forward.0"},
      {"Functional.linear.0.backward", ""},
      {"Functional.relu.0.forward", "Module.act.ReLU.forward.0"},
      {"Functional.relu.0.backward", "Module.fc.Linear.backward.0"},
      {"Torch.sum.0.forward", ""},
  });
  b.AddRows(&p, 0);
  b.Finish();
  EXPECT_EQ(r.rows[0].module, Find(r, "fc"));
  EXPECT_EQ(r.rows[1].module, Find(r, "fc"));
  EXPECT_EQ(r.rows[2].module, Find(r, "fc"));  // as construct.json says
  EXPECT_EQ(r.rows[3].module, -1);             // outside any module
}

TEST(ModuleTreeBuilderTest, ALoopInConstructJsonLeavesATree) {
  CompareResult r;
  ModuleTreeBuilder b(&r);
  AddRows(&r, {"Module.a.A.forward.0", "Module.b.B.forward.0"});
  ModuleParents p = Parents({{"Module.a.A.forward.0", "Module.b.B.forward.0"},
                             {"Module.b.B.forward.0", "Module.a.A.forward.0"},
                             {"Module.c.C.forward.0", "Module.c.C.forward.0"}});
  b.AddRows(&p, 0);
  b.Finish();
  ASSERT_EQ(r.modules.size(), 3u);
  int roots = 0;
  for (size_t n = 0; n < r.modules.size(); ++n) {
    size_t steps = 0;  // every walk up ends at a root
    for (int32_t up = static_cast<int32_t>(n); up >= 0;
         up = r.modules[up].parent)
      ASSERT_LT(++steps, 10u);
    roots += r.modules[n].parent < 0;
  }
  EXPECT_EQ(roots, 2);  // one of a/b, and c (its own parent)
}

// Issue 32: a construct.json parent chain 200,000 deep ran more than 300 s
// (each module's walk up to check for a loop was as long as the chain).
TEST(ModuleTreeBuilderTest, ParentChain200000DeepReadsInLinearTime) {
  constexpr int kDepth = 200000;
  auto name = [](int k) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "Module.m%06d.Linear.forward.0", k);
    return std::string(buf);
  };
  std::string json = "{";
  for (int k = 0; k < kDepth; ++k) {
    json += (k ? ", \"" : "\"") + name(k) + "\": ";
    json += k ? "\"" + name(k - 1) + "\"" : "null";
  }
  json += "}";
  std::string dir = testing::FreshTestDir("chain_");
  ASSERT_TRUE(WriteFileAtomic(dir + "construct.json", json).ok());
  auto start = std::chrono::steady_clock::now();
  auto p = ReadModuleParents(dir + "construct.json");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  CompareResult r;
  ModuleTreeBuilder b(&r);
  AddRows(&r, {name(kDepth - 1)});
  b.AddRows(&*p, 0);
  b.Finish();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(seconds, 20) << "quadratic again?";
  ASSERT_EQ(r.modules.size(), static_cast<size_t>(kDepth));
  // One chain: the deepest module is kDepth - 1 steps below the root.
  int32_t n = r.rows[0].module;
  ASSERT_GE(n, 0);
  EXPECT_EQ(r.modules[n].path, "m199999");
  int steps = 0;
  for (; r.modules[n].parent >= 0; n = r.modules[n].parent) ++steps;
  EXPECT_EQ(steps, kDepth - 1);
  EXPECT_EQ(r.modules[n].path, "m000000");
}

TEST(ModelContextTest, QuickStartModulesAndOperatorsInThem) {
  CompareOptions o;
  auto r = CompareDumpPaths(kMsprobe + "/quick_start/step1",
                            kMsprobe + "/quick_start/step0", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ParentPath(*r, "layer1.0.conv1"), "layer1.0");
  EXPECT_EQ(ParentPath(*r, "layer1.0"), "layer1");
  EXPECT_EQ(r->modules[Find(*r, "layer1")].cls, "Sequential");
  // Backward hooks' parents follow timing, not structure: not used.
  EXPECT_EQ(ParentPath(*r, "layer4.2.relu"), "layer4.2");
  size_t in_module = 0;
  for (const CompareRow& row : r->rows) {
    if (row.module < 0) continue;
    ++in_module;
    if (row.entry == "Functional.conv2d.0.forward") {
      EXPECT_EQ(r->modules[row.module].path, "conv1");
    }
  }
  EXPECT_GT(in_module, r->rows.size() / 2);
  for (const std::string& w : r->warnings)
    EXPECT_EQ(w.find("construct.json"), std::string::npos) << w;
}

// Copies the toy pair (target dumpB, baseline dumpA) into `dir`.
void CopyToyPair(const std::string& dir) {
  for (const char* side : {"dumpA", "dumpB"}) {
    fs::copy(kMsprobe + "/toy/" + side + "/out", dir + side,
             fs::copy_options::recursive);
  }
}

std::string RankDir(const std::string& root) {
  for (const auto& e : fs::directory_iterator(root + "/step0"))
    return e.path().string();
  return "";
}

TEST(ModelContextTest, DivergenceHasItsStackAndModule) {
  CompareOptions o;
  auto r = CompareDumpPaths(kMsprobe + "/toy/dumpB/out",
                            kMsprobe + "/toy/dumpA/out", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const FirstDivergence& fd = r->first_divergence;
  ASSERT_TRUE(fd.found);
  ASSERT_FALSE(fd.stack.empty()) << fd.entry;
  EXPECT_EQ(fd.stack[0].rfind("File ", 0), 0u) << fd.stack[0];
  ASSERT_GE(Find(*r, "linear"), 0);
  EXPECT_EQ(r->modules[Find(*r, "linear")].cls, "Linear");
}

TEST(ModelContextTest, ABadConstructJsonIsAWarningNotAFailure) {
  std::string dir = testing::FreshTestDir("model_context_");
  CopyToyPair(dir);
  std::string rank = RankDir(dir + "dumpB");
  ASSERT_TRUE(WriteFileAtomic(rank + "/construct.json", "{\"x\": ").ok());
  std::string base = RankDir(dir + "dumpA");
  ASSERT_TRUE(WriteFileAtomic(base + "/construct.json", "[]").ok());
  CompareOptions o;
  auto r = CompareDumpPaths(dir + "dumpB", dir + "dumpA", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  bool warned = false;
  for (const std::string& w : r->warnings)
    warned = warned || (w.find("module tree without construct.json") !=
                            std::string::npos &&
                        w.find("construct.json") != std::string::npos);
  EXPECT_TRUE(warned);
  // The Module.* entries still make their modules.
  EXPECT_GE(Find(*r, "linear"), 0);
  // A value it cannot use: said, and the rest of the file is used.
  ASSERT_TRUE(WriteFileAtomic(rank + "/construct.json",
                              R"({"Functional.linear.0.forward": 7,
                                  "Functional.relu.0.forward":
                                  "Module.linear.Linear.forward.0"})")
                  .ok());
  r = CompareDumpPaths(dir + "dumpB", dir + "dumpA", o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  warned = false;
  for (const std::string& w : r->warnings)
    warned = warned || w.find(
                           "'Functional.linear.0.forward': parent is an "
                           "int") != std::string::npos;
  EXPECT_TRUE(warned);
  for (const CompareRow& row : r->rows) {
    if (row.entry == "Functional.relu.0.forward") {
      EXPECT_EQ(row.module, Find(*r, "linear"));
    }
  }
}

}  // namespace
}  // namespace lockstep
