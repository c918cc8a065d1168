#include "lockstep/format/dump_reader.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>

#include "lockstep/core/file.h"

namespace lockstep {
namespace {

const std::string kMsprobe = std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe";
const std::string kQuickStart0 = kMsprobe + "/quick_start/step0/proc2016";
const std::string kToy = kMsprobe + "/toy";

DumpFile MustRead(const std::string& path) {
  auto d = ReadDumpJson(path);
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? std::move(d).value() : DumpFile();
}

const DumpEntry* FindEntry(const DumpFile& d, std::string_view name) {
  for (const auto& e : d.entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

// A dict's field, asserting that it is there.
const PyValue& At(const PyValue& v, std::string_view key) {
  const PyValue* f = v.Find(key);
  EXPECT_NE(f, nullptr) << "no key " << key << " in "
                        << v.PyStr().substr(0, 200);
  static const PyValue kNone;
  return f ? *f : kNone;
}

// Entry counts from Python: len(json.load(f)["data"]).
TEST(DumpReaderTest, EveryFixtureDumpParses) {
  const std::pair<const char*, size_t> kCounts[] = {
      {"cross_framework/mindspore/dump.json", 13},
      {"cross_framework/pytorch/dump.json", 12},
      {"layer_mapping/mindspore/dump.json", 1},
      {"layer_mapping/pytorch/dump.json", 1},
      {"quick_start/step0/proc2016/dump.json", 760},
      {"quick_start/step1/proc2016/dump.json", 760},
      {"toy/dumpA/out/step0/proc16954/dump.json", 8},
      {"toy/dumpB/out/step0/proc16991/dump.json", 8},
      {"toy/md5A/out/step0/proc18373/dump.json", 6},
      {"toy/md5B/out/step0/proc18453/dump.json", 6},
      {"toy/statA/out/step0/proc18486/dump.json", 6},
      {"toy/statB/out/step0/proc18543/dump.json", 6},
      {"toy/statC/out/step0/proc21052/dump.json", 8},
      {"toy/structA/out/step0/proc20935/dump.json", 0},
      {"toy/tensC/out/step0/proc21046/dump.json", 10},
      {"toy/unmatched/bench/dump.json", 5},
      {"toy/unmatched/npu/dump.json", 6},
  };
  size_t seen = 0;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(kMsprobe)) {
    seen += e.path().filename() == "dump.json";
  }
  EXPECT_EQ(seen, std::size(kCounts))
      << "a fixture dump.json is not listed here";
  for (const auto& [rel, count] : kCounts) {
    DumpFile d = MustRead(kMsprobe + "/" + rel);
    EXPECT_EQ(d.entries.size(), count) << rel;
    EXPECT_TRUE(d.framework_given) << rel;
    EXPECT_TRUE(d.extra.empty()) << rel;
  }
}

TEST(DumpReaderTest, QuickStartHeaderOrderAndLeaves) {
  DumpFile d = MustRead(kQuickStart0 + "/dump.json");
  EXPECT_EQ(d.task, "statistics");
  EXPECT_EQ(d.level, "mix");
  EXPECT_EQ(d.framework, "pytorch");
  EXPECT_EQ(d.dump_data_dir, "");  // null
  EXPECT_EQ(d.dir, kQuickStart0);
  EXPECT_EQ(TensorDataDir(d), kQuickStart0 + "/dump_tensor_data");
  ASSERT_EQ(d.entries.size(), 760u);
  // File order: an API precedes the module that contains it.
  EXPECT_EQ(d.entries[0].name, "Functional.conv2d.0.forward");
  EXPECT_EQ(d.entries[1].name, "Module.conv1.Conv2d.forward.0");

  const PyValue& args = At(d.entries[0].value, "input_args");
  ASSERT_EQ(args.items().size(), 7u);
  const PyValue& x = args.items()[0];
  EXPECT_EQ(At(x, "type").as_str(), "torch.Tensor");
  EXPECT_EQ(At(x, "dtype").as_str(), "torch.float32");
  EXPECT_EQ(At(x, "shape").PyStr(), "[32, 3, 224, 224]");
  EXPECT_EQ(At(x, "Max").kind(), PyValue::Kind::kFloat);
  EXPECT_EQ(At(x, "Max").PyStr(), "1.0");
  EXPECT_EQ(At(x, "Mean").as_double(), 0.4993983507156372);
  EXPECT_EQ(At(x, "requires_grad").kind(), PyValue::Kind::kBool);
  EXPECT_TRUE(args.items()[2].is_none());
  EXPECT_EQ(args.items()[3].PyStr(),
            "[{'type': 'int', 'value': 2}, {'type': 'int', 'value': 2}]");
  EXPECT_EQ(At(args.items()[6], "value").kind(), PyValue::Kind::kInt);
  EXPECT_EQ(At(d.entries[0].value, "is_recompute").PyStr(), "False");
  std::vector<std::string> keys;
  for (const auto& f : d.entries[0].value.fields()) keys.push_back(f.first);
  EXPECT_EQ(keys, (std::vector<std::string>{"input_args", "input_kwargs",
                                            "is_recompute", "output"}));
}

TEST(DumpReaderTest, NanStatisticsAreFloats) {
  DumpFile d = MustRead(kToy + "/tensC/out/step0/proc21046/dump.json");
  int nan = 0;
  for (const auto& e : d.entries) {
    std::string s = e.value.PyStr();
    for (size_t p = 0; (p = s.find("'Max': nan", p)) != std::string::npos; ++p)
      ++nan;
  }
  EXPECT_GT(nan, 0);
  const PyValue& max =
      At(At(d.entries[0].value, "input_args").items()[0], "Max");
  EXPECT_EQ(max.kind(), PyValue::Kind::kFloat);
}

TEST(DumpReaderTest, TensorModeDataNamesAndNullGrads) {
  DumpFile d = MustRead(kToy + "/dumpA/out/step0/proc16954/dump.json");
  EXPECT_EQ(d.task, "tensor");
  EXPECT_EQ(d.dump_data_dir,
            "/data/run/dumpA/out/step0/proc16954/dump_tensor_data");
  const DumpEntry* bw = FindEntry(d, "Functional.linear.0.backward");
  ASSERT_NE(bw, nullptr);
  const PyValue& out = At(bw->value, "output");
  ASSERT_EQ(out.items().size(), 3u);
  EXPECT_TRUE(out.items()[1].is_none());
  EXPECT_EQ(At(out.items()[2], "data_name").as_str(),
            "Functional.linear.0.backward.output.2.pt");
  const DumpEntry* sum = FindEntry(d, "Tensor.sum.0.forward");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ(At(At(sum->value, "output").items()[0], "shape").PyStr(), "[]");
}

TEST(DumpReaderTest, MindSporeDtypesAndIntStatistics) {
  DumpFile d = MustRead(kMsprobe + "/cross_framework/mindspore/dump.json");
  EXPECT_EQ(d.framework, "mindspore");
  const PyValue& t = At(d.entries[0].value, "input_args").items()[0];
  EXPECT_EQ(At(t, "type").as_str(), "mindspore.Tensor");
  EXPECT_EQ(At(t, "dtype").as_str(), "Int32");
  EXPECT_EQ(At(t, "Max").PyStr(), "3430.0");
  const DumpEntry* add1 = FindEntry(d, "Tensor.__add__.1.forward");
  ASSERT_NE(add1, nullptr);
  const PyValue& s = At(add1->value, "input_args").items()[0];
  EXPECT_EQ(At(s, "Max").kind(), PyValue::Kind::kInt);
  EXPECT_EQ(At(s, "Max").PyStr(), "423");
  const DumpEntry* b = FindEntry(d, "Tensor.__bool__.1.forward");
  ASSERT_NE(b, nullptr);
  const PyValue& bt = At(b->value, "input_args").items()[0];
  EXPECT_EQ(At(bt, "Max").PyStr(), "False");
  EXPECT_TRUE(At(bt, "Mean").is_none());
}

TEST(DumpReaderTest, MissingFrameworkKwargsAndEveryLeafType) {
  const char* text =
      R"({"task": "statistics", "level": "L1", "dump_data_dir": null,
    "data": {"Torch.sum.0.forward": {
      "input_args": [[{"type": "torch.Size", "value": [2, 3]}, [null]],
                     {"type": "slice", "value": [0, null, 2]},
                     {"type": "ellipsis", "value": "..."}],
      "input_kwargs": {"dtype": {"type": "torch.dtype", "value": "torch.float16"},
                       "device": {"type": "torch.device", "value": "npu:0"},
                       "memory_format": {"type": "torch.memory_format",
                                         "format": "contiguous_format"},
                       "group": {"type": "torch.ProcessGroup", "group_ranks": [0, 1],
                                 "group_id": "2ab3c4d5"},
                       "op": {"type": "torch.distributed.ReduceOp", "value": "SUM"},
                       "p2p": {"class_type": "torch.distributed.P2POp", "op": "isend",
                               "peer": 1, "tag": 0, "group_id": "x", "tensor": null},
                       "alpha": {"type": "float32", "value": 0.5},
                       "arr": {"type": "numpy.ndarray", "dtype": "float32", "shape": [2],
                               "Max": 1e300, "Min": -1e-300, "Mean": 0, "Norm": NaN}},
      "output": [{"type": "torch.Tensor", "dtype": "torch.bool", "shape": [4], "Max": true,
                  "Min": false, "Mean": null, "Norm": null, "requires_grad": false,
                  "md5": "71cf50c6"}]},
     "Module.a.A.parameters_grad.0": {"weight": [{"type": "torch.Tensor"}]}},
    "custom": [1]})";
  auto d = ReadDumpJsonFromString(text, "/r/rank0/dump.json");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_FALSE(d->framework_given);
  EXPECT_EQ(d->framework, "pytorch");
  EXPECT_EQ(d->dir, "/r/rank0");
  ASSERT_EQ(d->extra.size(), 1u);
  EXPECT_EQ(d->extra[0].first, "custom");
  const PyValue& kw = At(d->entries[0].value, "input_kwargs");
  EXPECT_EQ(kw.fields().size(), 8u);
  EXPECT_EQ(kw.fields()[0].first, "dtype");
  EXPECT_EQ(At(At(kw, "group"), "group_ranks").PyStr(), "[0, 1]");
  EXPECT_EQ(At(At(kw, "arr"), "Max").PyStr(), "1e+300");
  EXPECT_TRUE(std::isnan(At(At(kw, "arr"), "Norm").as_double()));
  EXPECT_EQ(At(d->entries[0].value, "input_args").items()[0].PyStr(),
            "[{'type': 'torch.Size', 'value': [2, 3]}, [None]]");
}

TEST(DumpReaderTest, RepeatedEntryKeepsFirstPositionLastValue) {
  auto d = ReadDumpJsonFromString(
      R"({"data": {"a": {"v": 1}, "b": {}, "a": {"v": 2}}})", "dump.json");
  ASSERT_TRUE(d.ok());
  ASSERT_EQ(d->entries.size(), 2u);
  EXPECT_EQ(d->entries[0].name, "a");
  EXPECT_EQ(At(d->entries[0].value, "v").as_int(), 2);
}

TEST(DumpReaderTest, ParsesQuickStartInAFewMilliseconds) {
  auto text = ReadFileToString(kQuickStart0 + "/dump.json");
  ASSERT_TRUE(text.ok());
  double best = 1e9;
  for (int i = 0; i < 20; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    auto d = ReadDumpJsonFromString(*text, "dump.json");
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - t0)
                    .count();
    ASSERT_TRUE(d.ok());
    best = std::min(best, ms);
  }
  std::printf(
      "[I] quick_start step0 dump.json (%zu bytes): best of 20 parses %.2f "
      "ms\n",
      text->size(), best);
#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__)
  EXPECT_LT(best, 50.0);  // a loose bound: a few ms expected on a build machine
#endif
}

TEST(DumpReaderTest, StackJsonHeadFormat) {
  auto s = ReadStackJson(kQuickStart0 + "/stack.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->size(), 410u);  // 410 names in 130 shared stacks
  const auto& frames = s->at("Functional.conv2d.0.forward");
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(
      frames[1],
      "File "
      "/root/miniconda3/lib/python3.12/site-packages/torch/nn/modules/conv.py, "
      "line 543, in _conv_forward, \n return F.conv2d(");
  auto toy = ReadStackJson(kToy + "/dumpA/out/step0/proc16954/stack.json");
  ASSERT_TRUE(toy.ok());
  EXPECT_EQ(toy->at("Module.linear.Linear.forward.0").size(), 4u);
}

TEST(DumpReaderTest, StackJsonOldFormatAndEmpty) {
  auto s = ReadStackJsonFromString(
      R"js({"Functional.linear.0.forward": ["File a.py, line 1, in f, \n x()"],
          "Tensor.add.0.forward": []})js",
      "stack.json");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->size(), 2u);
  EXPECT_EQ(s->at("Functional.linear.0.forward")[0],
            "File a.py, line 1, in f, \n x()");
  auto e = ReadStackJsonFromString("{}", "stack.json");
  ASSERT_TRUE(e.ok());
  EXPECT_TRUE(e->empty());
}

TEST(DumpReaderTest, StackJsonWrongShapesNameTheKey) {
  auto s = ReadStackJsonFromString(R"({"0": [["a"], ["f"]], "1": ["f"]})",
                                   "stack.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(
                "stack.json: key '1': expected [[names...], [frames...]]"),
            std::string::npos)
      << s.status().message();
  s = ReadStackJsonFromString(R"({"x": ["f", 3]})", "stack.json");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("key 'x': a frame is an int"),
            std::string::npos);
  EXPECT_FALSE(ReadStackJsonFromString("[]", "stack.json").ok());
}

TEST(DumpReaderTest, ConstructJson) {
  auto c = ReadConstructJson(kQuickStart0 + "/construct.json");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->size(), 868u);
  EXPECT_EQ(c->at("Functional.conv2d.0.forward").as_str(),
            "Module.conv1.Conv2d.forward.0");
  EXPECT_TRUE(c->at("Module.conv1.Conv2d.forward.0").is_none());
  auto m = ReadConstructJsonFromString(
      R"({"Functional.a.0.forward": ["Module.m.M.forward.0", 1],
          "megatron_micro_step_number": 2})",
      "construct.json");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->at("Functional.a.0.forward").PyStr(),
            "['Module.m.M.forward.0', 1]");
  EXPECT_EQ(m->at("megatron_micro_step_number").as_int(), 2);
  auto empty =
      ReadConstructJson(kToy + "/statA/out/step0/proc18486/construct.json");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(DumpReaderTest, MissingFileIsNotFound) {
  auto d = ReadDumpJson("/nonexistent/rank0/dump.json");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(ReadStackJson("/nonexistent/stack.json").status().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace lockstep
