#include "lockstep/compare/op_rows.h"

#include <gtest/gtest.h>

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
