#include "lockstep/compare/op_rows.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "lockstep/format/dump_reader.h"
#include "lockstep/format/json_reader.h"

namespace lockstep {
namespace {

PyValue Tensor(const char* dtype, std::vector<int64_t> shape, double max,
               const char* data_name = nullptr) {
  std::vector<PyValue> s;
  for (int64_t d : shape) s.push_back(PyValue::Int(d));
  std::vector<std::pair<std::string, PyValue>> f = {
      {"type", PyValue::Str("torch.Tensor")},
      {"dtype", PyValue::Str(dtype)},
      {"shape", PyValue::List(std::move(s))},
      {"Max", PyValue::Float(max)},
      {"Min", PyValue::Float(-max)},
      {"Mean", PyValue::Float(0.0)},
      {"Norm", PyValue::Float(max)},
      {"requires_grad", PyValue::Bool(true)}};
  if (data_name) f.emplace_back("data_name", PyValue::Str(data_name));
  return PyValue::Dict(std::move(f));
}

PyValue Scalar(const char* type, PyValue v) {
  return PyValue::Dict({{"type", PyValue::Str(type)}, {"value", std::move(v)}});
}

std::vector<std::string> Names(const std::vector<OpRow>& rows) {
  std::vector<std::string> n;
  for (const auto& r : rows) n.push_back(r.name);
  return n;
}

TEST(OpRowsTest, ArgsKwargsParametersOutputsInMsprobeOrder) {
  DumpEntry e{
      "Module.fc.Linear.forward.0",
      PyValue::Dict(
          {{"input_args",
            PyValue::List({Tensor("torch.float32", {2, 3}, 1.0),
                           PyValue::List({Scalar("int", PyValue::Int(2)),
                                          Scalar("int", PyValue::Int(3))})})},
           {"input_kwargs",
            PyValue::Dict(
                {{"reduction", Scalar("str", PyValue::Str("mean"))}})},
           {"output",
            PyValue::List({Tensor("torch.float32", {2, 4}, 2.0), PyValue()})},
           {"parameters", PyValue::Dict({{"weight", Tensor("torch.float32",
                                                           {4, 3}, 0.5)}})}})};
  std::vector<OpRow> rows;
  FlattenEntry(e, 0, &rows);
  EXPECT_EQ(Names(rows), (std::vector<std::string>{
                             "Module.fc.Linear.forward.0.input.0",
                             "Module.fc.Linear.forward.0.input.1.0",
                             "Module.fc.Linear.forward.0.input.1.1",
                             "Module.fc.Linear.forward.0.input.reduction",
                             "Module.fc.Linear.forward.0.parameters.weight",
                             "Module.fc.Linear.forward.0.output.0",
                             "Module.fc.Linear.forward.0.output.1"}));
  EXPECT_EQ(rows[0].dtype, "torch.float32");
  EXPECT_EQ(rows[0].shape, "[2, 3]");
  EXPECT_EQ(rows[0].requires_grad, "True");
  EXPECT_EQ(rows[0].nbytes, 24);
  EXPECT_EQ(rows[1].dtype, "<class 'int'>");
  EXPECT_EQ(rows[1].shape, "[]");
  EXPECT_EQ(rows[1].stats[0].PyStr(), "2");
  EXPECT_EQ(rows[1].requires_grad, "N/A");
  EXPECT_EQ(rows[3].dtype, "<class 'str'>");
  EXPECT_EQ(rows[3].stats[3].PyStr(), "mean");
  EXPECT_EQ(rows[4].state, RowState::kParameters);
  EXPECT_EQ(rows[6].dtype, "None");
  EXPECT_TRUE(rows[6].is_null);
  EXPECT_EQ(rows[6].data_name, "-1");
}

TEST(OpRowsTest, DataNameGivesTheRowName) {
  DumpEntry e{
      "Functional.relu.0.forward",
      PyValue::Dict(
          {{"input_args",
            PyValue::List({Tensor("torch.float16", {4}, 1.0,
                                  "Functional.relu.0.forward.input.0.pt")})}})};
  std::vector<OpRow> rows;
  FlattenEntry(e, 3, &rows);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "Functional.relu.0.forward.input.0");
  EXPECT_EQ(rows[0].data_name, "Functional.relu.0.forward.input.0.pt");
  EXPECT_EQ(rows[0].entry_index, 3u);
  EXPECT_EQ(rows[0].nbytes, 8);
}

TEST(OpRowsTest, ParametersGradAppendsOnlyTheParameterName) {
  DumpEntry e{
      "Module.fc.Linear.parameters_grad.0",
      PyValue::Dict(
          {{"bias", PyValue::List({Tensor("torch.float32", {4}, 1.0)})},
           {"weight", PyValue::List({Tensor("torch.float32", {4, 3}, 1.0)})}})};
  std::vector<OpRow> rows;
  FlattenEntry(e, 0, &rows);
  EXPECT_EQ(Names(rows), (std::vector<std::string>{
                             "Module.fc.Linear.parameters_grad.0.bias",
                             "Module.fc.Linear.parameters_grad.0.weight"}));
  EXPECT_EQ(rows[0].state, RowState::kParametersGrad);
}

TEST(OpRowsTest, SpecialLeafTypes) {
  DumpEntry e{
      "Tensor.view.0.forward",
      PyValue::Dict(
          {{"input_args",
            PyValue::List(
                {Scalar("torch.Size",
                        PyValue::List({PyValue::Int(2), PyValue::Int(3)})),
                 Scalar("slice", PyValue::List({PyValue::Int(0),
                                                PyValue::Int(4), PyValue()})),
                 Scalar("float", PyValue::Float(0.1)),
                 PyValue::Dict(
                     {{"type", PyValue::Str("torch.ProcessGroup")},
                      {"group_ranks", PyValue::List({PyValue::Int(0),
                                                     PyValue::Int(1)})}})})}})};
  std::vector<OpRow> rows;
  FlattenEntry(e, 0, &rows);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0].dtype, "torch.Size");
  EXPECT_EQ(rows[0].shape, "[2, 3]");
  EXPECT_EQ(rows[1].dtype, "slice");
  EXPECT_EQ(rows[1].shape, "(3,)");
  EXPECT_EQ(rows[2].dtype, "<class 'float'>");
  EXPECT_EQ(rows[2].stats[0].PyStr(), "0.1");
  EXPECT_EQ(rows[3].dtype, "torch.ProcessGroup");
  EXPECT_EQ(rows[3].stats[0].PyStr(), "[0, 1]");
  EXPECT_EQ(rows[3].md5, "[0, 1]");
}

TEST(OpRowsTest, EmptyContainersGiveNoRowsAndDeepNestingIsBounded) {
  PyValue deep = Tensor("torch.float32", {1}, 1.0);
  for (int i = 0; i < 200; ++i) deep = PyValue::List({deep});
  DumpEntry e{"X.y.0.forward",
              PyValue::Dict({{"input_args", PyValue::List({})},
                             {"input_kwargs", PyValue::Dict({})},
                             {"output", deep}})};
  std::vector<OpRow> rows;
  FlattenEntry(e, 0, &rows);
  EXPECT_TRUE(rows.empty());  // beyond msprobe's recursion limit
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

std::string RowText(const OpRow& r) {
  std::string s = r.name + "|" + r.entry + "|" + std::to_string(r.entry_index) +
                  "|" + RowStateName(r.state) + "|" + r.dtype + "|" + r.shape +
                  "|" + r.requires_grad + "|" + r.data_name + "|" + r.md5 +
                  "|" + std::to_string(r.nbytes) + "|" +
                  std::to_string(r.is_null) + std::to_string(r.is_tensor);
  for (const PyValue& v : r.stats) s += "|" + v.PyStr();
  return s;
}

// Compare reads dump.json streamed (ReadFlatDump): the rows must be those
// of the whole tree, for every fixture dump nobody here wrote.
TEST(ReadFlatDumpTest, RowsEqualThoseOfTheWholeTreeOnEveryFixture) {
  namespace fs = std::filesystem;
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(
           std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe")) {
    if (e.path().filename() != "dump.json") continue;
    auto whole = ReadDumpJson(e.path().string());
    auto flat = ReadFlatDump(e.path().string());
    ASSERT_EQ(whole.ok(), flat.ok()) << e.path();
    if (!whole.ok()) continue;
    ++files;
    std::vector<OpRow> want = FlattenDump(*whole);
    ASSERT_EQ(flat->rows.size(), want.size()) << e.path();
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_EQ(RowText(flat->rows[i]), RowText(want[i])) << e.path();
    bool md5 = false;
    for (const DumpEntry& d : whole->entries) md5 = md5 || ValueHasMd5(d.value);
    EXPECT_EQ(flat->has_md5, md5) << e.path();
    EXPECT_TRUE(flat->file.entries.empty());
    EXPECT_EQ(flat->file.task, whole->task);
    EXPECT_EQ(flat->file.level, whole->level);
  }
  EXPECT_GE(files, 15);
}

// The fast reader's rows (ReadFlatDump) against the whole tree's, on random
// dumps with every kind of leaf flattening special-cases: tensors with and
// without data_name or md5, value leaves (ints beyond int64, floats, str,
// bool, None, lists), torch.Size, slice, ellipsis, src/dst, process groups,
// P2POp, parameters_grad entries, nesting in lists and dicts.
TEST(ReadFlatDumpTest, FastRowsEqualThoseOfTheWholeTreeOnRandomDumps) {
  std::mt19937 rng(23);
  auto pick = [&](std::initializer_list<const char*> xs) {
    return std::string(*(xs.begin() + rng() % xs.size()));
  };
  auto scalar = [&] {
    return pick({"1", "-3", "123456789012345678901234567890", "0.5", "-1.5e-08",
                 "NaN", "Infinity", "true", "false", "null", "\"s\"", "\"\"",
                 "[1, 2]", "[]", "{\"a\": 1}"});
  };
  auto leaf = [&]() -> std::string {
    switch (rng() % 9) {
      case 0:
      case 1:
      case 2:
        return "{\"type\": \"torch.Tensor\", \"dtype\": " +
               pick({"\"torch.float32\"", "\"torch.bfloat16\"", "\"weird\"",
                     "\"\""}) +
               ", \"shape\": " + pick({"[2, 3]", "[]", "[-1]", "\"x\""}) +
               ", \"Max\": " + scalar() + ", \"Min\": " + scalar() +
               ", \"Mean\": " + scalar() + ", \"Norm\": " + scalar() +
               (rng() % 2 ? ", \"requires_grad\": " + scalar() : "") +
               (rng() % 3 == 0 ? ", \"md5\": \"abcd0123\"" : "") +
               (rng() % 3 == 0
                    ? ", \"data_name\": " + pick({"\"A.0.forward.input.0.pt\"",
                                                  "\"-1\"", "null", "7"})
                    : "") +
               "}";
      case 3:
        return "{\"type\": " +
               pick({"\"int\"", "\"float\"", "\"bool\"", "\"str\""}) +
               ", \"value\": " + scalar() + "}";
      case 4:
        return "{\"type\": " +
               pick({"\"torch.Size\"", "\"slice\"", "\"ellipsis\"",
                     "\"torch.ProcessGroup\""}) +
               ", \"value\": " + scalar() +
               (rng() % 2 ? ", \"group_ranks\": [0, 1]" : "") + "}";
      case 5:
        return "{\"class_type\": \"torch.distributed.P2POp\", "
               "\"tensor\": " +
               pick({"{\"type\": \"torch.Tensor\", \"dtype\": "
                     "\"torch.float32\", \"shape\": [1]}",
                     "{\"value\": 3}", "null"}) +
               "}";
      case 6:
        return "null";
      case 7:
        return "{\"no_type\": 1, \"inner\": {\"type\": \"int\", "
               "\"value\": 2}}";
      default:
        return scalar();
    }
  };
  auto io = [&] {
    std::string out = "[";
    for (int i = 0, n = static_cast<int>(rng() % 4); i < n; ++i) {
      std::string v =
          rng() % 4 == 0 ? "[" + leaf() + ", " + leaf() + "]" : leaf();
      out += (i ? ", " : "") + v;
    }
    return out + "]";
  };
  std::string dir = ::testing::TempDir() + "/flat_random";
  std::filesystem::create_directories(dir);
  std::string path = dir + "/dump.json";
  for (int round = 0; round < 200; ++round) {
    std::string text = "{\"task\": \"statistics\", \"data\": {";
    for (int e = 0, n = 1 + static_cast<int>(rng() % 8); e < n; ++e) {
      std::string name = pick({"Functional.linear", "Tensor.add",
                               "Distributed.send", "Module.fc.Linear"}) +
                         "." + std::to_string(e) + ".forward";
      std::string body;
      if (rng() % 6 == 0) {
        name = "Module.fc.Linear.parameters_grad." + std::to_string(e);
        body = "{\"weight\": " + io() + ", \"bias\": " + leaf() + "}";
      } else {
        body =
            "{\"output\": " + io() + ", \"input_args\": " + io() +
            (rng() % 2 ? ", \"input_kwargs\": {\"dst\": " + leaf() +
                             ", \"src\": " + leaf() + "}"
                       : "") +
            (rng() % 3 == 0 ? ", \"parameters\": {\"weight\": " + leaf() + "}"
                            : "") +
            "}";
      }
      text += std::string(e ? ", " : "") + "\"" + name + "\": " + body;
    }
    text += "}}";
    std::ofstream(path, std::ios::trunc) << text;
    // The fast reader decides these (else the test compares the general
    // reader with itself).
    auto fast = ParseJsonMembersFast(
        text, "data",
        [](std::string_view, JsonNode, size_t) { return Status::Ok(); });
    ASSERT_TRUE(fast.ok() && fast->decided) << text;
    auto whole = ReadDumpJson(path);
    auto flat = ReadFlatDump(path);
    ASSERT_TRUE(whole.ok()) << whole.status().ToString() << "\n" << text;
    ASSERT_TRUE(flat.ok()) << flat.status().ToString();
    std::vector<OpRow> want = FlattenDump(*whole);
    ASSERT_EQ(flat->rows.size(), want.size()) << text;
    for (size_t i = 0; i < want.size(); ++i) {
      ASSERT_EQ(RowText(flat->rows[i]), RowText(want[i])) << text;
      ASSERT_EQ(flat->rows[i].entry_index, want[i].entry_index);
    }
    EXPECT_EQ(flat->has_md5, DumpHasMd5(*whole)) << text;
  }
}

// A repeated entry name keeps its first position and last value (Python's
// dict): a stream cannot say so, so the file is read whole.
TEST(ReadFlatDumpTest, RepeatedEntryNamesAreReadAsPythonDoes) {
  std::string dir = ::testing::TempDir() + "/flat_repeat";
  std::filesystem::create_directories(dir);
  std::string path = dir + "/dump.json";
  auto tensor = [](double max) {
    return "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", "
           "\"shape\": [2], \"Max\": " +
           std::to_string(max) +
           ", \"Min\": 0, \"Mean\": 0, \"Norm\": 1, \"requires_grad\": "
           "false}";
  };
  std::ofstream(path) << "{\"task\": \"statistics\", \"data\": {"
                      << "\"A.0.forward\": {\"output\": [" << tensor(1)
                      << "]}, \"B.0.forward\": {\"output\": [" << tensor(2)
                      << "]}, \"A.0.forward\": {\"output\": [" << tensor(3)
                      << "]}}}";
  auto flat = ReadFlatDump(path);
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  ASSERT_EQ(flat->rows.size(), 2u);
  EXPECT_EQ(flat->rows[0].name, "A.0.forward.output.0");
  EXPECT_EQ(flat->rows[0].stats[0].as_double(), 3);  // the last value
  EXPECT_EQ(flat->rows[1].name, "B.0.forward.output.0");
  auto streamed = ReadDumpJsonStreaming(
      path, [](DumpEntry, size_t) { return Status::Ok(); });
  EXPECT_EQ(streamed.status().code(), StatusCode::kNotSupported);
}

// Python keeps the last of two "data" keys: a bad entry in the first one is
// no error (found by dump_json_fuzz).
TEST(ReadFlatDumpTest, ARepeatedDataKeyReplacesABadEntry) {
  std::string dir = ::testing::TempDir() + "/flat_data_twice";
  std::filesystem::create_directories(dir);
  std::string path = dir + "/dump.json";
  std::ofstream(path)
      << "{\"task\": \"statistics\", \"data\": {\"A.0.forward\": "
         "null}, \"data\": {\"B.0.forward\": {\"output\": "
         "[{\"type\": \"int\", \"value\": 3}]}}}";
  auto flat = ReadFlatDump(path);
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  ASSERT_EQ(flat->rows.size(), 1u);
  EXPECT_EQ(flat->rows[0].name, "B.0.forward.output.0");
  auto streamed = ReadDumpJsonStreaming(
      path, [](DumpEntry, size_t) { return Status::Ok(); });
  EXPECT_EQ(streamed.status().code(), StatusCode::kNotSupported);
  // With one "data" key the bad entry is an error, naming it.
  std::ofstream(path, std::ios::trunc) << "{\"data\": {\"A.0.forward\": null}}";
  flat = ReadFlatDump(path);
  ASSERT_FALSE(flat.ok());
  EXPECT_NE(flat.status().message().find("'A.0.forward': expected a dict"),
            std::string::npos)
      << flat.status().ToString();
}

TEST(ReadFlatDumpTest, ASinkErrorStopsTheRead) {
  std::string path = std::string(LOCKSTEP_FIXTURES_DIR) +
                     "/msprobe/quick_start/step0/proc2016/dump.json";
  size_t calls = 0;
  auto d = ReadDumpJsonStreaming(path, [&calls](DumpEntry e, size_t i) {
    ++calls;
    if (i == 3) return Status::InvalidArgument(e.name, "stop here");
    return Status::Ok();
  });
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(calls, 4u);
  EXPECT_NE(d.status().message().find("stop here"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
