#include "lockstep/compare/checkpoint_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace lockstep {
namespace {

const std::string kDir =
    std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/checkpoint/";

const CompareRow* Row(const CompareResult& r, const std::string& name) {
  for (const CompareRow& row : r.rows) {
    if (row.npu_name() == name) return &row;
  }
  return nullptr;
}

CompareOptions Options() {
  CompareOptions o;
  o.jobs = 2;
  return o;
}

// b.pt against a.pt (make_checkpoints.py): fc.weight + 0.05, fc.bias of
// another shape, half_p removed, new_p added; the rest equal.
TEST(CheckpointCompareTest, ChangedStateDictRowByRow) {
  StatusOr<CompareResult> r =
      CompareCheckpointPaths(kDir + "b.pt", kDir + "a.pt", Options());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->subject, CompareSubject::kCheckpoints);
  EXPECT_EQ(r->mode, CompareMode::kTensor);
  StatusOr<Checkpoint> b = ReadCheckpoint(kDir + "b.pt");
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(r->rows.size(), b->entries.size());  // one row per target name

  const CompareRow* embed = Row(*r, "embed.weight");
  ASSERT_TRUE(embed);
  EXPECT_EQ(embed->verdict, Verdict::kPass);
  EXPECT_EQ(embed->error, 0.0);
  EXPECT_NEAR(embed->cosine, 1.0, 1e-12);

  const CompareRow* bias = Row(*r, "fc.bias");
  ASSERT_TRUE(bias);
  EXPECT_EQ(bias->verdict, Verdict::kError);
  EXPECT_EQ(bias->reason, DivergenceReason::kShape);

  const CompareRow* added = Row(*r, "new_p");
  ASSERT_TRUE(added);
  EXPECT_EQ(added->verdict, Verdict::kUnmatched);

  // fc.weight: every element 0.05 larger. Relative L2 error against a
  // double reference from the files' own values.
  StatusOr<Checkpoint> a = ReadCheckpoint(kDir + "a.pt");
  ASSERT_TRUE(a.ok());
  const Tensor* wa = nullptr;
  for (const auto& e : a->entries)
    if (e.name == "fc.weight") wa = &e.tensor;
  ASSERT_TRUE(wa);
  double sum_b2 = 0;
  for (int64_t i = 0; i < wa->numel(); ++i)
    sum_b2 += double(wa->data_as<float>()[i]) * wa->data_as<float>()[i];
  double want = std::sqrt(wa->numel() * 0.05 * 0.05 / sum_b2);
  const CompareRow* w = Row(*r, "fc.weight");
  ASSERT_TRUE(w);
  EXPECT_NE(w->verdict, Verdict::kPass);
  EXPECT_NEAR(w->error, want, 1e-6 * want);
  EXPECT_NEAR(w->max_abs_err, 0.05, 1e-6);

  // half_p is in the baseline only: listed, and the compare fails.
  ASSERT_EQ(r->gaps.size(), 1u);
  EXPECT_EQ(r->gaps[0].entry, "half_p");
  EXPECT_FALSE(r->gaps[0].in_target);
  // No first divergence; the largest errors, the shape error first.
  // (The verdict line and exit status: tests/cli/checkpoint_cli_test.cc.)
  EXPECT_FALSE(r->first_divergence.found);
  ASSERT_GE(r->largest_errors.size(), 2u);
  EXPECT_EQ(r->rows[r->largest_errors[0]].npu_name(), "fc.bias");
}

TEST(CheckpointCompareTest, SameCheckpointPasses) {
  StatusOr<CompareResult> r =
      CompareCheckpointPaths(kDir + "nested.pt", kDir + "nested.pt", Options());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->summary.pass, r->summary.rows);
  EXPECT_GT(r->summary.rows, 30);
  EXPECT_TRUE(r->largest_errors.empty());
  EXPECT_TRUE(r->gaps.empty());
  const CompareRow* epoch = Row(*r, "epoch");
  ASSERT_TRUE(epoch);
  EXPECT_EQ(epoch->cells[2], "<class 'int'>");
  EXPECT_FALSE(epoch->is_tensor);
}

CheckpointEntry TensorEntry(const std::string& name, DType dtype,
                            std::vector<int64_t> shape, std::string bytes) {
  CheckpointEntry e;
  e.name = name;
  e.is_tensor = true;
  e.tensor = Tensor::FromBytes(dtype, std::move(shape), std::move(bytes));
  return e;
}

CheckpointEntry ValueEntry(const std::string& name, PyValue v,
                           const std::string& type) {
  CheckpointEntry e;
  e.name = name;
  e.value = std::move(v);
  e.type_name = type;
  return e;
}

std::string Floats(std::vector<float> v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

TEST(CheckpointCompareTest, ValuesDtypesAndOneSidedTensors) {
  Checkpoint t, b;
  t.path = "t";
  b.path = "b";
  t.entries.push_back(ValueEntry("epoch", PyValue::Int(4), "int"));
  b.entries.push_back(ValueEntry("epoch", PyValue::Int(3), "int"));
  t.entries.push_back(ValueEntry("tag", PyValue::Str("x"), "str"));
  b.entries.push_back(ValueEntry("tag", PyValue::Str("x"), "str"));
  // fp32 against fp64 of the same values: a dtype warning, metrics exact.
  t.entries.push_back(
      TensorEntry("w", DType::kFloat32, {2}, Floats({1.5f, -2.0f})));
  double d[2] = {1.5, -2.0};
  b.entries.push_back(TensorEntry("w", DType::kFloat64, {2},
                                  std::string(reinterpret_cast<char*>(d), 16)));
  // A tensor in the target, a value in the baseline.
  t.entries.push_back(TensorEntry("lr", DType::kFloat32, {1}, Floats({0.1f})));
  b.entries.push_back(ValueEntry("lr", PyValue::Float(0.1), "float"));
  StatusOr<CompareResult> r = CompareCheckpoints(t, b, Options());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  FinishResult(&*r);
  ASSERT_EQ(r->rows.size(), 4u);
  EXPECT_EQ(Row(*r, "epoch")->verdict, Verdict::kError);
  EXPECT_EQ(Row(*r, "tag")->verdict, Verdict::kPass);
  const CompareRow* w = Row(*r, "w");
  EXPECT_EQ(w->verdict, Verdict::kWarning);
  EXPECT_EQ(w->reason, DivergenceReason::kDtype);
  EXPECT_EQ(w->max_abs_err, 0.0);
  EXPECT_EQ(Row(*r, "lr")->verdict, Verdict::kError);
}

TEST(CheckpointCompareTest, LargestErrorsWorstFirst) {
  CompareResult r;
  r.subject = CompareSubject::kCheckpoints;
  auto add = [&](Verdict v, double e) {
    CompareRow row;
    row.verdict = v;
    row.error = e;
    r.rows.push_back(std::move(row));
  };
  add(Verdict::kPass, 0);          // 0: equal, never listed
  add(Verdict::kWarning, 1e-3);    // 1
  add(Verdict::kError, 0.5);       // 2
  add(Verdict::kPass, 1e-7);       // 3: rounding noise, listed last
  add(Verdict::kError, INFINITY);  // 4
  add(Verdict::kUnmatched, NAN);   // 5
  add(Verdict::kWarning, 2e-3);    // 6
  EXPECT_EQ(LargestErrors(r, 10), (std::vector<size_t>{4, 2, 5, 6, 1, 3}));
  EXPECT_EQ(LargestErrors(r, 2), (std::vector<size_t>{4, 2}));
}

TEST(CheckpointCompareTest, EmptyCheckpointIsAnError) {
  Checkpoint t, b;
  t.path = "empty.safetensors";
  b.entries.push_back(ValueEntry("x", PyValue::Int(1), "int"));
  StatusOr<CompareResult> r = CompareCheckpoints(t, b, Options());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("empty.safetensors"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
