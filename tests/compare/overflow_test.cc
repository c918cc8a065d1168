#include "lockstep/compare/overflow.h"

#include <gtest/gtest.h>

#include <cmath>

namespace lockstep {
namespace {

PyValue T(const char* dtype, double max, double min) {
  return PyValue::Dict({{"type", PyValue::Str("torch.Tensor")},
                        {"dtype", PyValue::Str(dtype)},
                        {"shape", PyValue::List({PyValue::Int(4)})},
                        {"Max", PyValue::Float(max)},
                        {"Min", PyValue::Float(min)},
                        {"Mean", PyValue::Float(0)},
                        {"Norm", PyValue::Float(1)}});
}

DumpEntry Op(const std::string& name, PyValue in, PyValue out) {
  return {name, PyValue::Dict({{"input_args", PyValue::List({std::move(in)})},
                               {"output", PyValue::List({std::move(out)})}})};
}

TEST(OverflowTest, SaturationNanInfAndOrigin) {
  DumpFile d;
  d.entries = {Op("Functional.linear.0.forward", T("torch.float16", 1, -1),
                  T("torch.float16", 2, -2)),
               Op("Functional.mul.0.forward", T("torch.float16", 2, -2),
                  T("torch.float16", 65504, -3)),
               Op("Functional.exp.0.forward", T("torch.float16", 65504, -3),
                  T("torch.float16", INFINITY, 0)),
               Op("Functional.log.0.forward", T("torch.bfloat16", 1, 0),
                  T("torch.bfloat16", 3.3895313892515355e38, NAN))};
  OverflowReport r = AnalyzeOverflow(d);
  ASSERT_EQ(r.entries.size(), 3u);
  EXPECT_EQ(r.entries[0].entry, "Functional.mul.0.forward");
  EXPECT_EQ(r.entries[0].kind, OverflowKind::kSaturated);
  EXPECT_TRUE(r.entries[0].origin);
  EXPECT_EQ(r.first_origin, 0);
  EXPECT_EQ(r.entries[1].kind, OverflowKind::kInf);
  EXPECT_FALSE(r.entries[1].origin);  // its input was already saturated
  EXPECT_EQ(r.entries[2].kind, OverflowKind::kNan);  // nan beats saturation
  EXPECT_TRUE(r.entries[2].origin);
  ASSERT_EQ(r.entries[0].inputs.size(), 1u);
  EXPECT_EQ(r.rows[r.entries[0].inputs[0]].name,
            "Functional.mul.0.forward.input.0");
}

TEST(OverflowTest, CleanDumpAndNonTensors) {
  DumpFile d;
  d.entries = {
      Op("Functional.add.0.forward", T("torch.float32", 65503.9, -1),
         T("torch.float32", 1, -1)),
      {"Functional.pow.0.forward",
       PyValue::Dict(
           {{"input_args", PyValue::List({PyValue::Dict(
                               {{"type", PyValue::Str("float")},
                                {"value", PyValue::Float(INFINITY)}})})}})}};
  OverflowReport r = AnalyzeOverflow(d);
  EXPECT_TRUE(r.entries.empty());
  EXPECT_EQ(r.first_origin, -1);
}

// A causal mask is no overflow (issue 36: a healthy transformer listed 18
// overflowing entries): masked_fill's -inf argument puts the infinities in
// its output, and softmax's outputs are clean. A NaN from an infinite
// argument, and an infinity no argument explains, still are overflows.
TEST(OverflowTest, InfinitiesAnArgumentPutsThereAreNoOverflow) {
  PyValue minus_inf = PyValue::Dict(
      {{"type", PyValue::Str("float")}, {"value", PyValue::Float(-INFINITY)}});
  auto with_arg = [&](const std::string& name, PyValue out) {
    return DumpEntry{
        name,
        PyValue::Dict(
            {{"input_args", PyValue::List({T("torch.float32", 1, -1),
                                           T("torch.bool", 1, 0), minus_inf})},
             {"output", PyValue::List({std::move(out)})}})};
  };
  DumpFile d;
  d.entries = {
      with_arg("Tensor.masked_fill.0.forward",
               T("torch.float32", 1, -INFINITY)),
      Op("Functional.softmax.0.forward", T("torch.float32", 1, -INFINITY),
         T("torch.float32", 1, 0)),
      with_arg("Tensor.masked_fill.1.forward", T("torch.float32", NAN, -1)),
      Op("Functional.exp.0.forward", T("torch.float32", 90, -1),
         T("torch.float32", INFINITY, 0))};
  OverflowReport r = AnalyzeOverflow(d);
  ASSERT_EQ(r.entries.size(), 2u);
  EXPECT_EQ(r.entries[0].entry, "Tensor.masked_fill.1.forward");
  EXPECT_EQ(r.entries[0].kind, OverflowKind::kNan);
  EXPECT_EQ(r.entries[1].entry, "Functional.exp.0.forward");
  EXPECT_TRUE(r.entries[1].origin);
}

}  // namespace
}  // namespace lockstep
