// Backward entries are each call's own vector-Jacobian product: checked
// against torch::autograd::grad of the same computation run again without
// the probe (tests/python/backward_test.py does the same for whole
// transformer and LeNet steps).
#include <gtest/gtest.h>
#include <torch/csrc/autograd/autograd.h>

#include <functional>

#include "lockstep/torch/probe.h"
#include "torch/probe_testing.h"

namespace lockstep {
namespace {

using testing::EntryEndingWith;
using testing::ExpectStatsOf;
using testing::Item;
using testing::ProbeTest;

bool HasEntryEndingWith(const DumpFile& d, const std::string& suffix) {
  for (const DumpEntry& e : d.entries) {
    if (e.name.size() >= suffix.size() &&
        e.name.compare(e.name.size() - suffix.size(), suffix.size(), suffix) ==
            0) {
      return true;
    }
  }
  return false;
}

at::Tensor Leaf(std::vector<int64_t> shape, uint64_t seed) {
  at::manual_seed(seed);
  return at::randn(shape).requires_grad_(true);
}

at::Tensor Grad(const at::Tensor& y, const at::Tensor& x, const at::Tensor& g) {
  return torch::autograd::grad({y}, {x}, {g}, /*retain_graph=*/true)[0];
}

class ProbeBackwardTest : public ProbeTest {
 protected:
  // Runs `loss_of` (building a scalar loss) under the probe, then backward.
  DumpFile Dump(const std::function<at::Tensor()>& loss_of) {
    auto p = MakeProbe(Config());
    EXPECT_TRUE(p->Start().ok());
    loss_of().backward();
    EXPECT_TRUE(p->Stop().ok());
    return ReadDump();
  }
};

TEST_F(ProbeBackwardTest, LinearOn3dInputHoldsWeightAndBiasGradients) {
  at::Tensor x = at::randn({2, 3, 4});  // needs no gradient
  at::Tensor w = Leaf({5, 4}, 1), b = Leaf({5}, 2), c = at::randn({2, 3, 5});
  DumpFile d = Dump([&] { return (at::linear(x, w, b) * c).sum(); });
  const PyValue& e = EntryEndingWith(d, ".linear.0.backward");
  at::Tensor y = at::linear(x, w, b);
  ExpectStatsOf(Item(e, "input", 0), c, "grad of y");
  ASSERT_EQ(e.Find("output")->items().size(), 3u);
  EXPECT_TRUE(Item(e, "output", 0).is_none());  // x
  ExpectStatsOf(Item(e, "output", 1), Grad(y, w, c), "grad of w");
  ExpectStatsOf(Item(e, "output", 2), Grad(y, b, c), "grad of b");
}

TEST_F(ProbeBackwardTest, BatchedMatmulHoldsBothInputGradients) {
  at::Tensor a = Leaf({2, 3, 4}, 3), m = Leaf({4, 5}, 4);
  at::Tensor c = at::randn({2, 3, 5});
  DumpFile d = Dump([&] { return (at::matmul(a, m) * c).sum(); });
  const PyValue& e = EntryEndingWith(d, ".matmul.0.backward");
  at::Tensor y = at::matmul(a, m);
  ExpectStatsOf(Item(e, "output", 0), Grad(y, a, c), "grad of a");
  ExpectStatsOf(Item(e, "output", 1), Grad(y, m, c), "grad of m");
}

TEST_F(ProbeBackwardTest, CallReturningItsInputPassesTheGradientThrough) {
  at::Tensor x = Leaf({3, 4}, 5), c = at::randn({3, 4});
  DumpFile d = Dump([&] {
    at::Tensor h = x * 2;
    return (h.to(at::kFloat) * c).sum();  // to() returns h itself
  });
  const PyValue& e = EntryEndingWith(d, ".to.0.backward");
  ExpectStatsOf(Item(e, "input", 0), c, "grad of to's output");
  ExpectStatsOf(Item(e, "output", 0), c, "grad passed to h");
  // mul's own entry: its input is the gradient of h, its output 2c.
  const PyValue& mul = EntryEndingWith(d, ".mul.0.backward");
  ExpectStatsOf(Item(mul, "input", 0), c, "grad of h");
  ExpectStatsOf(Item(mul, "output", 0), c * 2, "grad of x");
}

TEST_F(ProbeBackwardTest, LeafReturnedAsIsHasAnEntry) {
  at::Tensor w = Leaf({4}, 6), c = at::randn({4});
  DumpFile d = Dump([&] { return (w.to(at::kFloat) * c).sum(); });
  const PyValue& e = EntryEndingWith(d, ".to.0.backward");
  ExpectStatsOf(Item(e, "input", 0), c, "grad of w");
  ExpectStatsOf(Item(e, "output", 0), c, "grad passed to w");
}

TEST_F(ProbeBackwardTest, SplitHasOneInputPerOutputAndNullForUnused) {
  at::Tensor x = Leaf({4, 6}, 7), c = at::randn({4, 3});
  DumpFile d = Dump([&] { return (at::split(x, 3, 1)[0] * c).sum(); });
  const PyValue& e = EntryEndingWith(d, ".split.0.backward");
  ASSERT_EQ(e.Find("input")->items().size(), 2u);
  ExpectStatsOf(Item(e, "input", 0), c, "grad of part 0");
  EXPECT_TRUE(Item(e, "input", 1).is_none());  // part 1 is unused
  at::Tensor want = at::zeros({4, 6});
  want.slice(1, 0, 3).copy_(c);
  ExpectStatsOf(Item(e, "output", 0), want, "grad of x");
}

TEST_F(ProbeBackwardTest, InPlaceCallOnAViewAndTheViewCallHaveEntries) {
  at::Tensor x = Leaf({3, 4}, 8), c = at::randn({3, 4});
  DumpFile d = Dump([&] {
    at::Tensor h = x.clone();
    h.slice(1, 1, 3).mul_(2);  // rewrites h's history (CopySlices)
    return (h * c).sum();
  });
  at::Tensor region = c.slice(1, 1, 3);
  const PyValue& mul = EntryEndingWith(d, ".mul_.0.backward");
  ExpectStatsOf(Item(mul, "input", 0), region, "grad of what mul_ wrote");
  ExpectStatsOf(Item(mul, "output", 0), region * 2, "grad of the view");
  const PyValue& slice = EntryEndingWith(d, ".slice.0.backward");
  ExpectStatsOf(Item(slice, "input", 0), region * 2, "grad of the view");
  at::Tensor want = at::zeros({3, 4});
  want.slice(1, 1, 3).copy_(region * 2);
  ExpectStatsOf(Item(slice, "output", 0), want, "slice's share of h");
}

TEST_F(ProbeBackwardTest, EachConsumerOfATensorHoldsItsOwnShare) {
  at::Tensor x = Leaf({5}, 9), c1 = at::randn({5}), c2 = at::randn({5});
  DumpFile d = Dump([&] { return (at::sin(x) * c1 + at::cos(x) * c2).sum(); });
  at::Tensor xd = x.detach();
  ExpectStatsOf(Item(EntryEndingWith(d, ".sin.0.backward"), "output", 0),
                at::cos(xd) * c1, "sin's share");
  ExpectStatsOf(Item(EntryEndingWith(d, ".cos.0.backward"), "output", 0),
                -at::sin(xd) * c2, "cos's share");
}

TEST_F(ProbeBackwardTest, CallsUnderNoGradHaveNoBackwardEntry) {
  at::Tensor x = Leaf({4}, 10);
  DumpFile d = Dump([&] {
    {
      at::NoGradGuard no_grad;
      (void)at::exp(x);
    }
    return at::sin(x).sum();
  });
  EXPECT_TRUE(HasEntryEndingWith(d, ".exp.0.forward"));
  EXPECT_FALSE(HasEntryEndingWith(d, ".exp.0.backward"));
  EXPECT_TRUE(HasEntryEndingWith(d, ".sin.0.backward"));
}

}  // namespace
}  // namespace lockstep
