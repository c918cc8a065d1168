// Helpers shared by the probe tests: a temp-dir fixture, the two small
// models (Linear -> ReLU -> cos -> sum, and a 2-layer module tree), and
// readers of what the probe wrote.
#ifndef LOCKSTEP_TESTS_TORCH_PROBE_TESTING_H_
#define LOCKSTEP_TESTS_TORCH_PROBE_TESTING_H_

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <unistd.h>

#include <cfloat>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "lockstep/core/file.h"
#include "lockstep/format/dump_reader.h"
#include "lockstep/torch/probe.h"
#include "lockstep/torch/tensor_bridge.h"

namespace lockstep::testing {

namespace fs = std::filesystem;

// Linear(3 -> 4) -> relu -> cos -> sum, with fixed (generator-free) values
// so that runs are identical; relu sees negative and positive values.
struct Tiny {
  at::Tensor w = at::linspace(-1, 1, 12).reshape({4, 3}).requires_grad_();
  at::Tensor b = at::tensor({0.5f, -0.25f, 0.f, 1.f}).requires_grad_();
  at::Tensor x = at::linspace(-2, 3, 15).reshape({5, 3});
  // dL/ds, given so that backward() calls no ones_like of its own.
  at::Tensor seed = at::ones({});
};

// The tensors of one forward (and the backward) of Tiny.
struct TinyRun {
  at::Tensor y, r, c, s;
};

inline TinyRun RunTiny(const Tiny& m, bool backward = true) {
  TinyRun t;
  t.y = at::linear(m.x, m.w, m.b);
  t.r = at::relu(t.y);
  t.c = at::cos(t.r);
  t.s = at::sum(t.c);
  if (backward) t.s.backward(m.seed);
  return t;
}

// The L1 entries one step of RunTiny dumps, in order.
inline std::vector<std::string> TinyForwardNames() {
  return {"Functional.linear.0.forward", "Functional.relu.0.forward",
          "Torch.cos.0.forward", "Torch.sum.0.forward"};
}
inline std::vector<std::string> TinyBackwardNames() {
  return {"Torch.sum.0.backward", "Torch.cos.0.backward",
          "Functional.relu.0.backward", "Functional.linear.0.backward"};
}

// Every entry of one forward and backward of Tiny, in dump order.
inline std::vector<std::string> AllTinyNames() {
  std::vector<std::string> n = TinyForwardNames();
  for (const std::string& b : TinyBackwardNames()) n.push_back(b);
  return n;
}

// Net(fc1: Linear 3->4, relu, fc2: Linear 4->2) with ModuleScope entries
// for the root and both children.
struct TwoLayerImpl : torch::nn::Module {
  TwoLayerImpl()
      : fc1(register_module("fc1", torch::nn::Linear(3, 4))),
        fc2(register_module("fc2", torch::nn::Linear(4, 2))) {}

  at::Tensor Layer(Probe* p, torch::nn::Linear& l, const at::Tensor& x) {
    ModuleScope scope(p, *l, {x});
    at::Tensor y = at::linear(x, l->weight, l->bias);
    scope.SetOutputs({y});
    return y;
  }
  at::Tensor Forward(Probe* p, const at::Tensor& x) {
    ModuleScope scope(p, *this, {x});
    at::Tensor y = Layer(p, fc2, at::relu(Layer(p, fc1, x)));
    scope.SetOutputs({y});
    return y;
  }

  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(TwoLayer);

class ProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    at::set_num_threads(2);
    dir_ = fs::temp_directory_path() /
           ("lockstep_probe_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ProbeConfig Config(ProbeTask task = ProbeTask::kStatistics,
                     ProbeLevel level = ProbeLevel::kL1) const {
    ProbeConfig c;
    c.dump_path = (dir_ / "dump").string();
    c.task = task;
    c.level = level;
    return c;
  }
  static std::unique_ptr<Probe> MakeProbe(const ProbeConfig& c,
                                          ProbeOptions o = {}) {
    if (o.rank < 0) o.rank = 0;
    StatusOr<std::unique_ptr<Probe>> p = Probe::Create(c, o);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
    return p.ok() ? std::move(*p) : nullptr;
  }
  std::string RankDir(int64_t step = 0, int64_t rank = 0,
                      const std::string& sub = "dump") const {
    return (dir_ / sub / ("step" + std::to_string(step)) /
            ("rank" + std::to_string(rank)))
        .string();
  }
  DumpFile ReadDump(int64_t step = 0, int64_t rank = 0,
                    const std::string& sub = "dump") const {
    StatusOr<DumpFile> d =
        ReadDumpJson(RankDir(step, rank, sub) + "/dump.json");
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? *d : DumpFile();
  }
  // Dumps one step of Tiny (forward and backward) with `c`.
  DumpFile DumpTiny(const ProbeConfig& c, ProbeOptions o = {},
                    TinyRun* run = nullptr) {
    std::unique_ptr<Probe> p = MakeProbe(c, o);
    Tiny m;
    EXPECT_TRUE(p->Start().ok());
    TinyRun t = RunTiny(m);
    EXPECT_TRUE(p->Stop().ok());
    if (run != nullptr) *run = t;
    fs::path rel = fs::relative(c.dump_path, dir_);
    return ReadDump(o.first_step, 0, rel.string());
  }

  fs::path dir_;
};

inline std::vector<std::string> Names(const DumpFile& d) {
  std::vector<std::string> out;
  for (const DumpEntry& e : d.entries) out.push_back(e.name);
  return out;
}

// The entry `name`; a None value (and a test failure) when absent.
inline const PyValue& Entry(const DumpFile& d, const std::string& name) {
  static const PyValue kNone;
  for (const DumpEntry& e : d.entries) {
    if (e.name == name) return e.value;
  }
  ADD_FAILURE() << "no entry " << name;
  return kNone;
}

// The entry whose name ends with `suffix` (".linear.0.backward"); a test
// failure and None when there is none.
inline const PyValue& EntryEndingWith(const DumpFile& d,
                                      const std::string& suffix) {
  static const PyValue kNone;
  for (const DumpEntry& e : d.entries) {
    if (e.name.size() >= suffix.size() &&
        e.name.compare(e.name.size() - suffix.size(), suffix.size(), suffix) ==
            0) {
      return e.value;
    }
  }
  ADD_FAILURE() << "no entry ending with " << suffix;
  return kNone;
}

// Item `i` of list field `key` of an entry; None when absent.
inline const PyValue& Item(const PyValue& entry, const std::string& key,
                           size_t i) {
  static const PyValue kNone;
  const PyValue* list = entry.Find(key);
  if (list == nullptr || list->kind() != PyValue::Kind::kList ||
      i >= list->items().size()) {
    ADD_FAILURE() << "no " << key << "[" << i << "] in " << entry.PyRepr();
    return kNone;
  }
  return list->items()[i];
}

inline double Stat(const PyValue& tensor, const char* key) {
  const PyValue* v = tensor.Find(key);
  return v == nullptr ? std::nan("") : v->as_double();
}

// Checks a dumped tensor dict against `t`: dtype, shape, and Max/Min/Mean/
// Norm against a double reference. Max and Min are exact (a float converts
// to double exactly); Mean and Norm are sums of n doubles, within
// 4·n·DBL_EPSILON·max(|ref|, 1).
inline void ExpectStatsOf(const PyValue& d, const at::Tensor& t,
                          const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_EQ(d.kind(), PyValue::Kind::kDict) << d.PyRepr();
  EXPECT_EQ(d.Find("type")->as_str(), "torch.Tensor");
  EXPECT_EQ(d.Find("dtype")->as_str(),
            TorchDTypeName(*FromScalarType(t.scalar_type())));
  std::vector<int64_t> shape;
  for (const PyValue& s : d.Find("shape")->items()) shape.push_back(s.as_int());
  EXPECT_EQ(shape, t.sizes().vec());
  at::Tensor x = t.detach().to(at::kDouble).contiguous().reshape({-1});
  const double* p = x.data_ptr<double>();
  const double inf = std::numeric_limits<double>::infinity();
  double mx = -inf, mn = inf, sum = 0, sq = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    mx = std::max(mx, p[i]);
    mn = std::min(mn, p[i]);
    sum += p[i];
    sq += p[i] * p[i];
  }
  double mean = sum / x.numel(), norm = std::sqrt(sq);
  double k = 4.0 * x.numel() * DBL_EPSILON;
  EXPECT_EQ(Stat(d, "Max"), mx);
  EXPECT_EQ(Stat(d, "Min"), mn);
  EXPECT_NEAR(Stat(d, "Mean"), mean, k * std::max(std::fabs(mean), 1.0));
  EXPECT_NEAR(Stat(d, "Norm"), norm, k * std::max(norm, 1.0));
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_TORCH_PROBE_TESTING_H_
