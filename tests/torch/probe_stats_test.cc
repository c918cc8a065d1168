// The probe's statistics at level L1: against a double reference, the
// statistics cache (views, aliases of `.data`, ElementsOf), strided tensors,
// the value rules of tensor_summary.h and the device-style statistics path.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "lockstep/torch/probe.h"
#include "torch/probe_testing.h"
#include "torch/tensor_summary.h"

namespace lockstep {
namespace {

using testing::Entry;
using testing::ExpectStatsOf;
using testing::Item;
using testing::Names;
using testing::ProbeTest;
using testing::RunTiny;
using testing::Stat;
using testing::Tiny;
using testing::TinyRun;

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST_F(ProbeTest, StatisticsEqualADoubleReference) {
  Tiny m;
  TinyRun t;
  DumpFile d = DumpTiny(Config(), {}, &t);
  const PyValue& linear = Entry(d, "Functional.linear.0.forward");
  ExpectStatsOf(Item(linear, "input_args", 0), m.x, "linear input x");
  ExpectStatsOf(Item(linear, "input_args", 1), m.w, "linear input w");
  ExpectStatsOf(Item(linear, "input_args", 2), m.b, "linear input b");
  ExpectStatsOf(Item(linear, "output", 0), t.y, "linear output");
  const PyValue& relu = Entry(d, "Functional.relu.0.forward");
  ExpectStatsOf(Item(relu, "input_args", 0), t.y, "relu input");
  ExpectStatsOf(Item(relu, "output", 0), t.r, "relu output");
  ExpectStatsOf(Item(Entry(d, "Torch.cos.0.forward"), "output", 0), t.c,
                "cos output");
  ExpectStatsOf(Item(Entry(d, "Torch.sum.0.forward"), "output", 0), t.s,
                "sum output (0-d)");
  EXPECT_TRUE(Item(linear, "input_args", 1).Find("requires_grad")->as_bool());
  EXPECT_FALSE(Item(linear, "input_args", 0).Find("requires_grad")->as_bool());
  // Backward: in = dL/dc (ones), out = dL/dr = -sin(r).
  const PyValue& cos_b = Entry(d, "Torch.cos.0.backward");
  ExpectStatsOf(Item(cos_b, "input", 0), at::ones_like(t.c), "cos grad in");
  ExpectStatsOf(Item(cos_b, "output", 0), -at::sin(t.r.detach()),
                "cos grad out");
}

// Views holding the same elements (transpose, view, contiguous of a
// contiguous tensor) take the statistics of the tensor they view from the
// probe's cache; a view taken after an in-place change does not.
TEST_F(ProbeTest, ViewsShareStatisticsUntilTheDataChanges) {
  auto p = MakeProbe(Config());
  at::Tensor x = at::linspace(-3, 5, 24).reshape({4, 6});
  at::Tensor y, z, w, v;
  ASSERT_TRUE(p->Start().ok());
  y = at::exp(x);
  z = y.t();
  w = y.view({-1});
  y.add_(1.5);
  v = y.view({3, 8});
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d = ReadDump();
  // z and w are views of y: they show the add_ now; the probe recorded them
  // before it.
  ExpectStatsOf(Item(Entry(d, "Tensor.t.0.forward"), "output", 0),
                at::exp(x).t(), "transpose of exp");
  at::Tensor w_before = at::exp(x).view({-1});
  ExpectStatsOf(Item(Entry(d, "Tensor.view.0.forward"), "output", 0), w_before,
                "view before add_");
  ExpectStatsOf(Item(Entry(d, "Tensor.view.1.forward"), "output", 0), v,
                "view after add_");
}

// The probe's cache takes a view's statistics from a cached tensor with the
// same elements: ElementsOf says which elements a tensor holds.
TEST(ElementSetTest, ViewsWithTheSameElementsHaveEqualSets) {
  using S = TensorSummarizer;
  at::Tensor fused = at::arange(4 * 5 * 1152, at::kFloat).reshape({4, 5, 1152});
  std::vector<at::Tensor> qkv = fused.split(384, -1);
  at::Tensor q = qkv[0];
  S::ElementSet sq = S::ElementsOf(q);
  ASSERT_TRUE(sq.valid);
  // A fused projection's q: heads and their transpose, a reshape.
  EXPECT_TRUE(sq == S::ElementsOf(q.view({4, 5, 12, 32}).transpose(1, 2)));
  EXPECT_TRUE(sq == S::ElementsOf(q.transpose(0, 1)));
  EXPECT_TRUE(sq == S::ElementsOf(q.unsqueeze(0)));
  // Other elements of the same storage.
  EXPECT_FALSE(sq == S::ElementsOf(qkv[1]));
  EXPECT_FALSE(sq == S::ElementsOf(q.narrow(-1, 0, 383)));
  EXPECT_FALSE(sq == S::ElementsOf(fused));
  // Dense tensors and their permutations.
  at::Tensor x = at::randn({6, 10});
  S::ElementSet sx = S::ElementsOf(x);
  EXPECT_TRUE(sx == S::ElementsOf(x.t()));
  EXPECT_TRUE(sx == S::ElementsOf(x.view({-1})));
  EXPECT_TRUE(sx == S::ElementsOf(x.view({3, 2, 10}).permute({2, 0, 1})));
  EXPECT_FALSE(sx == S::ElementsOf(x.slice(0, 0, 6, 2)));
  EXPECT_FALSE(sx == S::ElementsOf(x.slice(0, 1, 6)));
  // Layouts it does not describe (repeated elements, none): equal to none,
  // themselves included.
  for (const at::Tensor& t :
       {x[0].expand({3, 10}), x.as_strided({3, 3}, {1, 1}), x.slice(0, 0, 0)}) {
    S::ElementSet s = S::ElementsOf(t);
    EXPECT_FALSE(s.valid) << t.sizes() << " " << t.strides();
    EXPECT_FALSE(s == s);
  }
}

// A tensor read again after many operators, and written since; many
// short-lived tensors in between, whose memory (and TensorImpl) a new
// tensor may get: the statistics cache must never lend a dead tensor's
// statistics to a new one, nor an old version's to a written tensor.
TEST_F(ProbeTest, CachedStatisticsFollowTheTensorsThroughAStep) {
  auto p = MakeProbe(Config());
  at::Tensor w = at::full({2048}, 3.0);
  ASSERT_TRUE(p->Start().ok());
  at::cos(w);
  for (int i = 0; i < 20; ++i) {
    at::Tensor t = at::full({2048}, static_cast<double>(i));
    at::sin(t.view({32, 64}));  // its own and its view's statistics
    at::sin(t);
  }
  at::cos(w);  // unchanged: from the cache
  w.mul_(2);
  at::cos(w);  // written since: computed again
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d = ReadDump();
  for (int i = 0; i < 20; ++i) {
    at::Tensor t = at::full({2048}, static_cast<double>(i));
    for (int k : {2 * i, 2 * i + 1}) {
      std::string name = "Torch.sin." + std::to_string(k) + ".forward";
      ExpectStatsOf(Item(Entry(d, name), "input_args", 0),
                    k % 2 == 0 ? t.view({32, 64}) : t, name);
    }
  }
  ExpectStatsOf(Item(Entry(d, "Torch.cos.1.forward"), "input_args", 0),
                at::full({2048}, 3.0), "cos 1");
  ExpectStatsOf(Item(Entry(d, "Torch.cos.2.forward"), "input_args", 0),
                at::full({2048}, 6.0), "cos 2");
}

// Writes through `p.data` (variable_data() in C++), as many optimizers do:
// each such alias has a version counter of its own, so the cache must not
// take one alias's statistics for another's, nor keep p's own after a write
// through an alias.
TEST_F(ProbeTest, WritesThroughDataAliasesAreSeen) {
  auto p = MakeProbe(Config());
  at::Tensor w = at::ones({4096}).requires_grad_();
  at::Tensor g = at::full({4096}, 0.5);
  ASSERT_TRUE(p->Start().ok());
  at::Tensor c0 = at::cos(w);  // w itself: cached
  w.variable_data().mul_(3);   // w's own version counter stays at 0
  at::Tensor c1 = at::cos(w);
  w.variable_data().mul_(0.5);
  w.variable_data().add_(g);
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d = ReadDump();
  auto full = [](double v) { return at::full({4096}, v); };
  auto expect = [&](const char* entry, const char* side, double v) {
    ExpectStatsOf(Item(Entry(d, entry), side, 0), full(v),
                  std::string(entry) + " " + side);
  };
  expect("Torch.cos.0.forward", "input_args", 1);
  expect("Tensor.mul_.0.forward", "output", 3);
  expect("Torch.cos.1.forward", "input_args", 3);
  expect("Tensor.mul_.1.forward", "input_args", 3);
  expect("Tensor.mul_.1.forward", "output", 1.5);
  expect("Tensor.add_.0.forward", "input_args", 1.5);
  expect("Tensor.add_.0.forward", "output", 2);
}

// Strided tensors are summarized where they lie
// (src/torch/tensor_summary_stats.cc StridedMoments): a slice of a fused
// projection's output (runs of 384 contiguous elements), a transpose (dense,
// one run), an expanded tensor (stride 0: the repeats count, as in the logical
// tensor), a bf16 slice, the heads of a fused q (runs of 32: copied), a column
// slice (runs of 5), every other row of a transpose (runs of 1) and a
// strided int64 tensor.
TEST_F(ProbeTest, StridedTensorsHaveTheStatisticsOfTheirElements) {
  at::Tensor fused = at::linspace(-7, 9, 4 * 5 * 3 * 384).reshape({4, 5, 1152});
  std::vector<at::Tensor> qkv = fused.split(384, -1);
  at::Tensor wide = at::sin(at::arange(6 * 700, at::kFloat)).reshape({6, 700});
  std::vector<at::Tensor> inputs = {
      qkv[0],
      qkv[1],
      qkv[2],
      wide.t(),
      at::cos(at::arange(300, at::kFloat)).expand({3, 300}),
      fused.to(at::kBFloat16).narrow(-1, 384, 384),
      qkv[0].reshape({4, 5, 12, 32}).transpose(1, 2),
      wide.narrow(1, 3, 5),
      wide.t().slice(0, 0, 700, 2),
      at::arange(-900, 900, at::kLong).reshape({30, 60}).t().slice(1, 1, 30, 3),
  };
  const char* what[] = {"q",          "k",       "v",
                        "transpose",  "expand",  "bf16 slice",
                        "heads of q", "columns", "every other row of t()",
                        "int64 slice"};
  for (size_t i : {0, 1, 2, 6, 7, 8, 9}) {
    ASSERT_FALSE(inputs[i].is_non_overlapping_and_dense()) << what[i];
  }
  auto p = MakeProbe(Config());
  ASSERT_TRUE(p->Start().ok());
  for (const at::Tensor& t : inputs) at::neg(t);
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d = ReadDump();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const PyValue& in =
        Item(Entry(d, "Torch.neg." + std::to_string(i) + ".forward"),
             "input_args", 0);
    if (inputs[i].scalar_type() == at::kLong) {
      SCOPED_TRACE(what[i]);
      EXPECT_EQ(in.Find("Max")->as_int(), inputs[i].max().item<int64_t>());
      EXPECT_EQ(in.Find("Min")->as_int(), inputs[i].min().item<int64_t>());
      continue;
    }
    ExpectStatsOf(in, inputs[i], what[i]);
  }
}

// Inputs that exercise the summary rules, made before a probe starts.
struct OddValues {
  float nan = std::numeric_limits<float>::quiet_NaN();
  float inf = std::numeric_limits<float>::infinity();
  at::Tensor ints = at::tensor({-3, 5, 7}, at::kLong);
  at::Tensor bools = at::tensor({1, 0, 1}, at::kInt).to(at::kBool);
  at::Tensor all_true = at::ones({2}, at::kBool);
  at::Tensor empty = at::zeros({0, 3});
  at::Tensor zero_d = at::scalar_tensor(-2.0, at::kFloat);
  at::Tensor with_nan = at::tensor({1.f, nan, inf});
  at::Tensor pos_inf = at::tensor({1.f, inf, -2.f});
  at::Tensor both_inf = at::tensor({inf, -inf, 1.f});
  at::Tensor f64 = at::linspace(-1, 1, 7, at::kDouble);
};

void RunOdd(const OddValues& v) {
  at::add(v.ints, v.ints);
  at::logical_not(v.bools);
  at::logical_not(v.all_true);
  at::cos(v.empty);
  at::cos(v.zero_d);
  at::cos(v.with_nan);
  at::neg(v.pos_inf);
  at::abs(v.both_inf);
  at::cos(v.f64);
}

TEST_F(ProbeTest, ValuesFollowTheSummaryRules) {
  auto p = MakeProbe(Config());
  OddValues v;
  ASSERT_TRUE(p->Start().ok());
  RunOdd(v);
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d = ReadDump();

  const PyValue& add = Entry(d, "Torch.add.0.forward");
  const PyValue& i0 = Item(add, "input_args", 0);
  EXPECT_EQ(i0.Find("dtype")->as_str(), "torch.int64");
  EXPECT_EQ(i0.Find("Max")->kind(), PyValue::Kind::kInt);
  EXPECT_EQ(i0.Find("Max")->as_int(), 7);
  EXPECT_EQ(i0.Find("Min")->as_int(), -3);
  EXPECT_TRUE(i0.Find("Mean")->is_none());
  EXPECT_TRUE(i0.Find("Norm")->is_none());
  // A scalar argument: alpha=1.
  const PyValue& alpha = Item(add, "input_args", 2);
  EXPECT_EQ(alpha.Find("type")->as_str(), "int");
  EXPECT_EQ(alpha.Find("value")->as_int(), 1);

  const PyValue& b0 =
      Item(Entry(d, "Torch.logical_not.0.forward"), "input_args", 0);
  EXPECT_EQ(b0.Find("dtype")->as_str(), "torch.bool");
  EXPECT_TRUE(b0.Find("Max")->as_bool());   // any
  EXPECT_FALSE(b0.Find("Min")->as_bool());  // all
  EXPECT_TRUE(b0.Find("Mean")->is_none());
  const PyValue& b1 =
      Item(Entry(d, "Torch.logical_not.1.forward"), "input_args", 0);
  EXPECT_TRUE(b1.Find("Min")->as_bool());
  EXPECT_EQ(b1.Find("Min")->kind(), PyValue::Kind::kBool);

  const PyValue& empty = Item(Entry(d, "Torch.cos.0.forward"), "input_args", 0);
  EXPECT_EQ(empty.Find("shape")->PyRepr(), "[0, 3]");
  for (const char* k : {"Max", "Min", "Mean", "Norm"}) {
    EXPECT_TRUE(empty.Find(k)->is_none()) << k;
  }

  const PyValue& zero_d =
      Item(Entry(d, "Torch.cos.1.forward"), "input_args", 0);
  EXPECT_EQ(zero_d.Find("shape")->PyRepr(), "[]");
  EXPECT_EQ(Stat(zero_d, "Max"), -2.0);
  EXPECT_EQ(Stat(zero_d, "Min"), -2.0);
  EXPECT_EQ(Stat(zero_d, "Mean"), -2.0);
  EXPECT_EQ(Stat(zero_d, "Norm"), 2.0);

  const PyValue& with_nan =
      Item(Entry(d, "Torch.cos.2.forward"), "input_args", 0);
  for (const char* k : {"Max", "Min", "Mean", "Norm"}) {
    EXPECT_TRUE(std::isnan(Stat(with_nan, k))) << k;
  }
  const PyValue& neg = Entry(d, "Torch.neg.0.forward");
  const PyValue& pos_inf = Item(neg, "input_args", 0);
  EXPECT_EQ(Stat(pos_inf, "Max"), kInf);
  EXPECT_EQ(Stat(pos_inf, "Min"), -2.0);
  EXPECT_EQ(Stat(pos_inf, "Mean"), kInf);
  EXPECT_EQ(Stat(pos_inf, "Norm"), kInf);
  const PyValue& neg_inf = Item(neg, "output", 0);
  EXPECT_EQ(Stat(neg_inf, "Max"), 2.0);
  EXPECT_EQ(Stat(neg_inf, "Min"), -kInf);
  EXPECT_EQ(Stat(neg_inf, "Mean"), -kInf);
  const PyValue& both = Item(Entry(d, "Torch.abs.0.forward"), "input_args", 0);
  EXPECT_EQ(Stat(both, "Max"), kInf);
  EXPECT_EQ(Stat(both, "Min"), -kInf);
  EXPECT_TRUE(std::isnan(Stat(both, "Mean")));
  EXPECT_EQ(Stat(both, "Norm"), kInf);
}

// Compares Max/Min/Mean/Norm of every tensor dict in `a` and `b`.
void ExpectSameStats(const PyValue& a, const PyValue& b, double rel,
                     const std::string& where, int* count) {
  ASSERT_EQ(a.kind(), b.kind()) << where;
  if (a.kind() == PyValue::Kind::kList) {
    ASSERT_EQ(a.items().size(), b.items().size()) << where;
    for (size_t i = 0; i < a.items().size(); ++i) {
      ExpectSameStats(a.items()[i], b.items()[i], rel,
                      where + "." + std::to_string(i), count);
    }
    return;
  }
  if (a.kind() != PyValue::Kind::kDict) return;
  for (const auto& [k, va] : a.fields()) {
    const PyValue* vb = b.Find(k);
    ASSERT_NE(vb, nullptr) << where << "." << k;
    bool stat = k == "Max" || k == "Min" || k == "Mean" || k == "Norm";
    if (!stat || !va.is_number()) {
      ExpectSameStats(va, *vb, rel, where + "." + k, count);
      continue;
    }
    ++*count;
    double x = va.as_double(), y = vb->as_double();
    if (std::isnan(x) || std::isinf(x)) {
      EXPECT_TRUE(std::isnan(x) ? std::isnan(y) : x == y)
          << where << "." << k << ": " << x << " vs " << y;
    } else {
      EXPECT_NEAR(y, x, rel * std::max(std::fabs(x), 1.0)) << where << "." << k;
    }
  }
}

TEST_F(ProbeTest, DeviceStyleStatisticsMatchTheImmediatePath) {
  for (bool device_style : {false, true}) {
    ProbeConfig c = Config();
    c.dump_path = (dir_ / (device_style ? "device" : "host")).string();
    ProbeOptions o;
    o.device_style_stats = device_style;
    auto p = MakeProbe(c, o);
    Tiny m;
    OddValues v;
    // Several dtypes: device-style extremes are fetched per dtype (fp16 has
    // no aminmax kernel on LibTorch 1.13's CPU: min and max instead).
    at::Tensor half_precision = at::linspace(-2, 3, 50).to(at::kBFloat16);
    at::Tensor fp16 = at::linspace(-3, 2, 40).to(at::kHalf);
    ASSERT_TRUE(p->Start().ok());
    RunTiny(m);
    RunOdd(v);
    at::neg(half_precision);
    at::abs(fp16);
    ASSERT_TRUE(p->Stop().ok());
  }
  DumpFile host = ReadDump(0, 0, "host");
  DumpFile device = ReadDump(0, 0, "device");
  ASSERT_EQ(Names(host), Names(device));
  // Device-style Mean and Norm are sums in double too (ATen's, in another
  // order): within 1e-12 relative of the kernel's for these sizes (a float
  // accumulation would be ~1e-7 off).
  int count = 0;
  for (size_t i = 0; i < host.entries.size(); ++i) {
    ExpectSameStats(host.entries[i].value, device.entries[i].value, 1e-12,
                    host.entries[i].name, &count);
  }
  EXPECT_GT(count, 100);
  StatusOr<std::string> text =
      ReadFileToString(RankDir(0, 0, "device") + "/dump.json");
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(text->find('\x01'), std::string::npos) << "placeholder left";
  EXPECT_EQ(text->find("\\u0001"), std::string::npos) << "placeholder left";
}

}  // namespace
}  // namespace lockstep
