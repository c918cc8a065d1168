#include "lockstep/format/module_parents.h"

#include <gtest/gtest.h>

#include <string>

#include "lockstep/core/file.h"
#include "lockstep/format/dump_reader.h"
#include "testing/test_dir.h"

namespace lockstep {
namespace {

const std::string kMsprobe = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe";

ModuleParents FromText(const std::string& text) {
  auto map = ReadConstructJsonFromString(text, "construct.json");
  EXPECT_TRUE(map.ok()) << map.status().ToString();
  return ModuleParentsFrom(map.ok() ? *map : ConstructMap(), "construct.json");
}

TEST(ModuleOfEntryTest, PathAndClassOfModuleEntries) {
  auto m = ModuleOfEntry("Module.layer1.0.conv1.Conv2d.forward.0");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->path, "layer1.0.conv1");
  EXPECT_EQ(m->cls, "Conv2d");
  m = ModuleOfEntry("Module.fc.Linear.parameters_grad.3");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->path, "fc");
  EXPECT_EQ(m->cls, "Linear");
  m = ModuleOfEntry("Cell.dense.Dense.backward.1");  // MindSpore
  ASSERT_TRUE(m);
  EXPECT_EQ(m->path, "dense");
  m = ModuleOfEntry("Module.Net.forward.0");  // the root module
  ASSERT_TRUE(m);
  EXPECT_EQ(m->path, "Net");
  EXPECT_EQ(m->cls, "Net");
  // A path segment named like a phase does not end the path early.
  m = ModuleOfEntry("Module.backward.block.Block.forward.2");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->path, "backward.block");
}

TEST(ModuleOfEntryTest, OtherNamesAreNoModule) {
  EXPECT_FALSE(ModuleOfEntry("Functional.linear.0.forward"));
  EXPECT_FALSE(ModuleOfEntry("Module.forward.0"));  // no class
  EXPECT_FALSE(ModuleOfEntry("Module.linear"));
  EXPECT_FALSE(ModuleOfEntry("Module."));
  EXPECT_FALSE(ModuleOfEntry(""));
  EXPECT_FALSE(ModuleOfEntry("optimizer"));
}

TEST(ModuleParentsTest, StringsNullsAndMegatronPairs) {
  ModuleParents p = FromText(R"({
    "Functional.linear.0.forward": "Module.fc.Linear.forward.0",
    "Module.fc.Linear.forward.0": null,
    "Functional.add.0.forward": ["Module.block.Block.forward.0", 1],
    "Torch.sqrt.0.forward": "optimizer",
    "megatron_micro_step_number": 2})");
  EXPECT_TRUE(p.problems.empty()) << p.problems[0];
  EXPECT_EQ(p.parent.size(), 4u);
  EXPECT_EQ(p.parent.at("Functional.linear.0.forward"),
            "Module.fc.Linear.forward.0");
  EXPECT_EQ(p.parent.at("Module.fc.Linear.forward.0"), "");
  EXPECT_EQ(p.parent.at("Functional.add.0.forward"),
            "Module.block.Block.forward.0");
  EXPECT_EQ(p.parent.at("Torch.sqrt.0.forward"), "optimizer");
  EXPECT_EQ(p.parent.count("megatron_micro_step_number"), 0u);
  ASSERT_EQ(p.modules.size(), 1u);
  EXPECT_EQ(p.modules[0], "Module.fc.Linear.forward.0");
}

TEST(ModuleParentsTest, UnusableValuesAreSkippedAndSaid) {
  ModuleParents p = FromText(R"({
    "Functional.a.0.forward": 3,
    "Functional.b.0.forward": {"x": 1},
    "Functional.c.0.forward": [4, "Module.m.M.forward.0"],
    "Functional.d.0.forward": [],
    "Functional.e.0.forward": "Module.m.M.forward.0"})");
  EXPECT_EQ(p.parent.size(), 1u);
  EXPECT_EQ(p.parent.at("Functional.e.0.forward"), "Module.m.M.forward.0");
  ASSERT_EQ(p.problems.size(), 4u);
  EXPECT_EQ(p.problems[0],
            "construct.json: entry 'Functional.a.0.forward': parent is an int, "
            "expected a str, null or [parent, micro_step]");
  EXPECT_NE(p.problems[1].find("parent is a dict"), std::string::npos);
  EXPECT_NE(p.problems[2].find("a list that does not start with a parent"),
            std::string::npos);
}

TEST(ModuleParentsTest, UnreadableFilesAreErrorsNamingThem) {
  std::string dir = testing::FreshTestDir("module_parents_");
  for (const char* text : {"[1, 2]", "{\"a\": ", "", "not json"}) {
    ASSERT_TRUE(WriteFileAtomic(dir + "construct.json", text).ok());
    auto p = ReadModuleParents(dir + "construct.json");
    ASSERT_FALSE(p.ok()) << text;
    EXPECT_NE(p.status().message().find("construct.json"), std::string::npos)
        << p.status().ToString();
  }
  EXPECT_EQ(ReadModuleParents(dir + "absent.json").status().code(),
            StatusCode::kNotFound);
}

TEST(ModuleParentsTest, QuickStartHasContainersOnlyConstructNames) {
  auto p = ReadModuleParents(kMsprobe +
                             "/quick_start/step0/proc2016/construct.json");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->problems.empty());
  EXPECT_EQ(p->parent.at("Module.layer1.0.Bottleneck.forward.0"),
            "Module.layer1.Sequential.forward.0");
  EXPECT_EQ(p->parent.at("Functional.conv2d.0.forward"),
            "Module.conv1.Conv2d.forward.0");
  bool has_sequential = false;
  for (const std::string& m : p->modules)
    has_sequential =
        has_sequential || m == "Module.layer1.Sequential.forward.0";
  EXPECT_TRUE(has_sequential);
}

}  // namespace
}  // namespace lockstep
