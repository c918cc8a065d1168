// The probe at level L1: entry names and order, operator arguments, md5,
// tensor files and the overflow task. Its statistics are tested in
// probe_stats_test.cc.
#include "lockstep/torch/probe.h"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

#include "lockstep/format/npy.h"
#include "lockstep/format/pt_writer.h"
#include "lockstep/format/tensor_file.h"
#include "lockstep/format/tensor_pack.h"
#include "lockstep/format/zip.h"
#include "lockstep/torch/tensor_bridge.h"
#include "torch/probe_testing.h"

namespace lockstep {
namespace {

using testing::Entry;
using testing::EntryEndingWith;
using testing::ExpectStatsOf;
using testing::Item;
using testing::Names;
using testing::ProbeTest;
using testing::Stat;
using testing::Tiny;
using testing::TinyBackwardNames;
using testing::TinyForwardNames;
using testing::TinyRun;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<std::string> Concat(std::vector<std::string> a,
                                const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

TEST_F(ProbeTest,
       EntriesAreOutermostOpsForwardThenBackwardNumberedLikeForward) {
  DumpFile d = DumpTiny(Config());
  EXPECT_EQ(Names(d), Concat(TinyForwardNames(), TinyBackwardNames()));
  EXPECT_EQ(d.task, "statistics");
  EXPECT_EQ(d.level, "L1");
  // linear's parts (t, addmm, matmul) are not entries of their own.
  for (const std::string& n : Names(d)) {
    EXPECT_EQ(n.find("addmm"), std::string::npos) << n;
    EXPECT_EQ(n.find("Tensor.t."), std::string::npos) << n;
  }
}

TEST_F(ProbeTest, CallsOfOneApiAreNumberedInOrder) {
  auto p = MakeProbe(Config());
  at::Tensor a = at::ones({3});
  ASSERT_TRUE(p->Start().ok());
  at::Tensor b = at::cos(at::cos(at::cos(a)));
  EXPECT_EQ(p->entries_in_step(), 3);
  ASSERT_TRUE(p->Stop().ok());
  EXPECT_EQ(Names(ReadDump()), (std::vector<std::string>{
                                   "Torch.cos.0.forward", "Torch.cos.1.forward",
                                   "Torch.cos.2.forward"}));
}

// Operators an entry calls are never entries, whether RecordFunction is
// turned off around it (operators seen to call others) or left on (first
// calls, and operators seen to call none); nor is the probe's own work
// inside an entry (a strided tensor's copy).
TEST_F(ProbeTest, InnerOperatorsAreNeverEntries) {
  auto p = MakeProbe(Config());
  at::Tensor x = at::randn({4, 6});
  at::Tensor w = at::randn({3, 6});
  at::Tensor b = at::randn({3});
  at::Tensor strided = at::randn({64, 64}).slice(1, 0, 32);  // runs of 32
  ASSERT_TRUE(p->Start().ok());
  for (int i = 0; i < 3; ++i) {
    at::linear(x, w, b);  // addmm, t inside
    strided.add_(1.0);    // no operator inside; the probe copies `strided`
    at::relu(x);
  }
  ASSERT_TRUE(p->Stop().ok());
  std::vector<std::string> want;
  for (int i = 0; i < 3; ++i) {
    std::string n = std::to_string(i);
    want.push_back("Functional.linear." + n + ".forward");
    want.push_back("Tensor.add_." + n + ".forward");
    want.push_back("Functional.relu." + n + ".forward");
  }
  EXPECT_EQ(Names(ReadDump()), want);
}

// A Python API call (lockstep_probe's api_names "python") names the first
// operator it runs at the top level, numbered by that name; its other
// operators are not entries; dump=false hides them all.
TEST_F(ProbeTest, PythonApiCallsNameTheirFirstOperator) {
  auto p = MakeProbe(Config());
  at::Tensor x = at::randn({4, 6});
  at::Tensor w = at::randn({3, 6});
  ASSERT_TRUE(p->Start().ok());
  BeginPythonApiCall("Tensor.__add__", true);
  at::add(x, 1.0);
  EXPECT_EQ(EndPythonApiCall(), 1);
  BeginPythonApiCall("Functional.normalize", true);
  at::Tensor n = at::norm(x);  // the entry
  at::div(x, n);               // a second top-level operator: none
  EXPECT_EQ(EndPythonApiCall(), 2);
  BeginPythonApiCall("Tensor.view", false);  // not dumped
  x.view({24});
  EXPECT_EQ(EndPythonApiCall(), 1);
  at::add(x, 2.0);  // no Python call open: the operator's own name
  BeginPythonApiCall("Tensor.__add__", true);
  at::linear(x, w);  // its inner operators stay inner
  EXPECT_EQ(EndPythonApiCall(), 1);
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d = ReadDump();
  EXPECT_EQ(Names(d),
            (std::vector<std::string>{
                "Tensor.__add__.0.forward", "Functional.normalize.0.forward",
                "Torch.add.0.forward", "Tensor.__add__.1.forward"}));
  // The named entry holds its operator's own inputs and output.
  const PyValue& shape =
      *Item(Entry(d, "Functional.normalize.0.forward"), "output", 0)
           .Find("shape");
  EXPECT_TRUE(shape.items().empty()) << shape.PyRepr();  // norm's: 0-dim
}

// With the Python call's own arguments (lockstep_probe's encoding): the
// entry lists them as the call gave them, tensors taken from the operator's
// inputs; a malformed encoding, or one naming a tensor the operator did not
// get, leaves the operator's own arguments.
TEST_F(ProbeTest, PythonApiCallsRecordTheirOwnArguments) {
  auto p = MakeProbe(Config());
  at::Tensor x = at::randn({2, 6});
  at::Tensor other = at::randn({2, 6});
  auto ptr = [](const at::Tensor& t) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "t%llx",
                  static_cast<unsigned long long>(
                      reinterpret_cast<uintptr_t>(t.unsafeGetTensorImpl())));
    return std::string(buf);
  };
  const std::string sep = "\x1f";
  ASSERT_TRUE(p->Start().ok());
  BeginPythonApiCall("Functional.layer_norm", true,
                     ptr(x) + sep + "[" + sep + "i6" + sep + "]" + sep + "K" +
                         sep + "=eps" + sep + "f1e-05");
  at::layer_norm(x, {6});
  EndPythonApiCall();
  for (std::string bad :
       {ptr(other) + sep + "K", ptr(x) + sep + "[" + sep + "K",
        ptr(x) + sep + "K" + sep + "=eps"}) {
    BeginPythonApiCall("Torch.relu", true, bad);
    at::relu(x);
    EndPythonApiCall();
  }
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d = ReadDump();
  const PyValue& ln = Entry(d, "Functional.layer_norm.0.forward");
  EXPECT_EQ(ln.Find("input_args")->items().size(), 2u) << ln.PyRepr();
  EXPECT_EQ(Item(ln, "input_args", 0).Find("shape")->PyRepr(), "[2, 6]");
  EXPECT_EQ(Item(ln, "input_args", 1).PyRepr(),
            "[{'type': 'int', 'value': 6}]");
  EXPECT_EQ(ln.Find("input_kwargs")->PyRepr(),
            "{'eps': {'type': 'float', 'value': 1e-05}}");
  for (int i = 0; i < 3; ++i) {  // relu's own: (self)
    const PyValue& r = Entry(d, "Torch.relu." + std::to_string(i) + ".forward");
    EXPECT_EQ(r.Find("input_args")->items().size(), 1u) << r.PyRepr();
    EXPECT_EQ(r.Find("input_kwargs")->PyRepr(), "{}");
  }
}

// Python numbers that ATen wrapped into 0-dim tensors (`x.mul_(2.5)`) are
// recorded as the numbers, read from the tensor's memory.
TEST_F(ProbeTest, WrappedNumbersAreRecordedAsNumbers) {
  auto wrapped = [](at::Tensor t) {
    t.unsafeGetTensorImpl()->set_wrapped_number(true);
    return t;
  };
  auto p = MakeProbe(Config());
  at::Tensor x = at::ones({3});
  ASSERT_TRUE(p->Start().ok());
  at::mul(x, wrapped(at::scalar_tensor(-2.5, at::kDouble)));
  at::mul(x, wrapped(at::scalar_tensor(7, at::kLong)));
  at::mul(x, wrapped(at::scalar_tensor(true, at::kBool)));
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d = ReadDump();
  auto arg = [&](int call) -> const PyValue& {
    return Item(Entry(d, "Torch.mul." + std::to_string(call) + ".forward"),
                "input_args", 1);
  };
  EXPECT_EQ(arg(0).Find("type")->as_str(), "float");
  EXPECT_EQ(arg(0).Find("value")->as_double(), -2.5);
  EXPECT_EQ(arg(1).Find("type")->as_str(), "int");
  EXPECT_EQ(arg(1).Find("value")->as_int(), 7);
  EXPECT_EQ(arg(2).Find("type")->as_str(), "bool");
  EXPECT_TRUE(arg(2).Find("value")->as_bool());
}

// ATen passes a dtype as an int (a ScalarType): the entry names the dtype,
// as msprobe records the one its caller gave ("torch.bfloat16", not 15),
// and an int argument beside it stays an int.
TEST_F(ProbeTest, DtypeArgumentsAreRecordedAsDtypes) {
  auto p = MakeProbe(Config());
  at::Tensor x = at::ones({3});
  ASSERT_TRUE(p->Start().ok());
  (void)x.to(at::kBFloat16);             // aten::to.dtype: ScalarType
  (void)at::sum(x, at::kDouble);         // aten::sum: ScalarType?
  (void)at::softmax(x, 0, at::kDouble);  // aten::softmax.int: int, ScalarType?
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d = ReadDump();
  auto expect_dtype = [&](const PyValue& arg, const char* want) {
    ASSERT_EQ(arg.kind(), PyValue::Kind::kDict) << arg.PyRepr();
    EXPECT_EQ(arg.Find("type")->as_str(), "torch.dtype") << arg.PyRepr();
    EXPECT_EQ(arg.Find("value")->as_str(), want) << arg.PyRepr();
  };
  expect_dtype(Item(EntryEndingWith(d, ".to.0.forward"), "input_args", 1),
               "torch.bfloat16");
  expect_dtype(Item(EntryEndingWith(d, ".sum.0.forward"), "input_args", 1),
               "torch.float64");
  const PyValue& softmax = EntryEndingWith(d, "softmax.0.forward");
  EXPECT_EQ(Item(softmax, "input_args", 1).Find("type")->as_str(), "int");
  EXPECT_EQ(Item(softmax, "input_args", 1).Find("value")->as_int(), 0);
  expect_dtype(Item(softmax, "input_args", 2), "torch.float64");
}

std::string Crc32Hex(const at::Tensor& t) {
  at::Tensor c = t.detach().contiguous();
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x",
                Crc32(std::string_view(static_cast<const char*>(c.data_ptr()),
                                       c.nbytes())));
  return hex;
}

TEST_F(ProbeTest, Md5IsTheCrc32OfTheTensorBytes) {
  Tiny m;
  TinyRun t;
  DumpFile d = DumpTiny(Config(ProbeTask::kMd5), {}, &t);
  EXPECT_EQ(d.task, "statistics");  // as msprobe's summary_mode md5
  const PyValue& linear = Entry(d, "Functional.linear.0.forward");
  EXPECT_EQ(Item(linear, "input_args", 1).Find("md5")->as_str(), Crc32Hex(m.w));
  EXPECT_EQ(Item(linear, "output", 0).Find("md5")->as_str(), Crc32Hex(t.y));
  EXPECT_EQ(
      Item(Entry(d, "Torch.sum.0.forward"), "output", 0).Find("md5")->as_str(),
      Crc32Hex(t.s));
  // Statistics are still there.
  ExpectStatsOf(Item(linear, "output", 0), t.y, "linear output");
}

// Every data_name in `v` (recursively).
void CollectDataNames(const PyValue& v, std::vector<std::string>* out) {
  if (v.kind() == PyValue::Kind::kList) {
    for (const PyValue& i : v.items()) CollectDataNames(i, out);
  } else if (v.kind() == PyValue::Kind::kDict) {
    for (const auto& [k, f] : v.fields()) {
      if (k == "data_name") out->push_back(f.as_str());
      CollectDataNames(f, out);
    }
  }
}

void ExpectFileEquals(const std::string& path, const at::Tensor& t) {
  StatusOr<Tensor> got = ReadTensorFile(path);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  at::Tensor want = t.detach().contiguous();
  EXPECT_EQ(got->shape(), want.sizes().vec()) << path;
  ASSERT_EQ(got->nbytes(), want.nbytes()) << path;
  EXPECT_EQ(std::memcmp(got->data(), want.data_ptr(), want.nbytes()), 0)
      << path;
}

TEST_F(ProbeTest, TensorModeWritesPtFilesThatReadBackEqual) {
  Tiny m;
  TinyRun t;
  DumpFile d = DumpTiny(Config(ProbeTask::kTensor), {}, &t);
  EXPECT_EQ(d.task, "tensor");
  std::vector<std::string> names;
  for (const DumpEntry& e : d.entries) CollectDataNames(e.value, &names);
  std::string data_dir = RankDir() + "/dump_tensor_data";
  std::set<std::string> files;
  for (const auto& f : testing::fs::directory_iterator(data_dir)) {
    files.insert(f.path().filename().string());
  }
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), files);
  EXPECT_EQ(names.size(), files.size()) << "a data_name is used twice";
  ExpectFileEquals(data_dir + "/Functional.linear.0.forward.input.0.pt", m.x);
  ExpectFileEquals(data_dir + "/Functional.linear.0.forward.input.1.pt", m.w);
  ExpectFileEquals(data_dir + "/Functional.linear.0.forward.output.0.pt", t.y);
  ExpectFileEquals(data_dir + "/Torch.sum.0.forward.output.0.pt", t.s);
  ExpectFileEquals(data_dir + "/Torch.cos.0.backward.output.0.pt",
                   -at::sin(t.r.detach()));
  EXPECT_EQ(Item(Entry(d, "Torch.cos.0.forward"), "output", 0)
                .Find("data_name")
                ->as_str(),
            "Torch.cos.0.forward.output.0.pt");
}

// The files are what torch.save writes for those tensors (msprobe's
// PyTorch compare loads them with torch.load).
TEST_F(ProbeTest, TensorModePtFilesAreTorchSaveBytes) {
  Tiny m;
  TinyRun t;
  DumpTiny(Config(ProbeTask::kTensor), {}, &t);
  const std::string stem = "Functional.linear.0.forward.input.0";
  std::string path = RankDir() + "/dump_tensor_data/" + stem + ".pt";
  StatusOr<std::string> bytes = ReadFileToString(path);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  StatusOr<Tensor> x = ReadTensorFile(path);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(*bytes, *EncodePt(*x, stem));
  EXPECT_EQ(bytes->substr(0, 4), "PK\x03\x04");
}

// "tensor_format": "npy" keeps numpy.save files, and dump.json names them.
TEST_F(ProbeTest, NpyTensorFormatWritesNpyFiles) {
  Tiny m;
  TinyRun t;
  ProbeConfig c = Config(ProbeTask::kTensor);
  c.tensor_format = TensorFormat::kNpy;
  DumpFile d = DumpTiny(c, {}, &t);
  std::string data_dir = RankDir() + "/dump_tensor_data";
  std::vector<std::string> names;
  for (const DumpEntry& e : d.entries) CollectDataNames(e.value, &names);
  ASSERT_FALSE(names.empty());
  for (const auto& n : names) {
    EXPECT_EQ(n.substr(n.size() - 4), ".npy") << n;
    EXPECT_TRUE(testing::fs::exists(data_dir + "/" + n)) << n;
  }
  StatusOr<Tensor> x = ReadNpy(
      data_dir + "/" + std::string("Functional.linear.0.forward.input.0.npy"));
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  ExpectFileEquals(data_dir + "/Functional.linear.0.forward.output.0.npy", t.y);
  EXPECT_FALSE(testing::fs::exists(data_dir +
                                   "/Functional.linear.0.forward.input.0.pt"));
}

// The same tensors, packed into one dump_tensor_data.pack (written on the
// writer thread, finished before dump.json, also with write_behind).
TEST_F(ProbeTest, PackedTensorModeHoldsTheSameTensors) {
  for (bool behind : {false, true}) {
    Tiny m;
    TinyRun t;
    ProbeConfig c = Config(ProbeTask::kTensor);
    c.dump_path += behind ? "_behind" : "";
    c.tensor_format = TensorFormat::kPack;
    ProbeOptions o;
    o.write_behind = behind;
    DumpFile d = DumpTiny(c, o, &t);
    std::string rank = RankDir(0, 0, behind ? "dump_behind" : "dump");
    EXPECT_FALSE(testing::fs::exists(rank + "/dump_tensor_data"));
    EXPECT_TRUE(d.dump_data_dir.empty());
    std::vector<std::string> names;
    for (const DumpEntry& e : d.entries) CollectDataNames(e.value, &names);
    auto pack = PackReader::Open(rank + "/dump_tensor_data.pack");
    ASSERT_TRUE(pack.ok()) << pack.status().ToString();
    std::set<std::string> entries;
    for (const PackEntry& e : (*pack)->entries()) entries.insert(e.name);
    EXPECT_EQ(std::set<std::string>(names.begin(), names.end()), entries);
    EXPECT_EQ(names.size(), entries.size());
    auto expect = [&](const std::string& name, const at::Tensor& want) {
      StatusOr<Tensor> got = (*pack)->Read(name);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      at::Tensor w = want.detach().contiguous();
      EXPECT_EQ(got->shape(), w.sizes().vec()) << name;
      ASSERT_EQ(got->nbytes(), w.nbytes()) << name;
      EXPECT_EQ(std::memcmp(got->data(), w.data_ptr(), w.nbytes()), 0) << name;
    };
    expect("Functional.linear.0.forward.input.0.npy", m.x);
    expect("Functional.linear.0.forward.output.0.npy", t.y);
    expect("Torch.cos.0.backward.output.0.npy", -at::sin(t.r.detach()));
  }
}

TEST_F(ProbeTest, OverflowTaskKeepsOnlyOverflowingEntriesAndStops) {
  ProbeConfig c = Config(ProbeTask::kOverflow);
  c.overflow_nums = 2;
  auto p = MakeProbe(c);
  ASSERT_TRUE(p->Start().ok());
  at::Tensor x = at::linspace(1, 2, 6);
  at::Tensor a = at::mul(x, 1e20);  // finite
  at::Tensor big = at::mul(a, a);   // inf: kept
  at::Tensor e = at::exp(x);        // finite
  at::Tensor t = a.clone();
  t.mul_(a);  // in place, inf: kept
  EXPECT_EQ(p->overflow_count(), 2);
  EXPECT_TRUE(p->terminated());
  at::Tensor after = at::add(big, 1);  // inf, but the probe stopped
  ASSERT_TRUE(p->Stop().ok());
  DumpFile d = ReadDump();
  EXPECT_EQ(d.task, "overflow_check");
  EXPECT_EQ(Names(d), (std::vector<std::string>{"Torch.mul.1.forward",
                                                "Tensor.mul_.0.forward"}));
  std::string data_dir = RankDir() + "/dump_tensor_data";
  ExpectFileEquals(data_dir + "/Torch.mul.1.forward.input.0.pt", a);
  ExpectFileEquals(data_dir + "/Torch.mul.1.forward.output.0.pt", big);
  // The in-place operator's input is saved as it was before it ran.
  ExpectFileEquals(data_dir + "/Tensor.mul_.0.forward.input.0.pt", a);
  ExpectFileEquals(data_dir + "/Tensor.mul_.0.forward.output.0.pt", t);
  EXPECT_EQ(Stat(Item(Entry(d, "Torch.mul.1.forward"), "output", 0), "Max"),
            kInf);
}

TEST_F(ProbeTest, OverflowNumsMinusOneKeepsEveryOverflow) {
  ProbeConfig c = Config(ProbeTask::kOverflow);
  c.overflow_nums = -1;
  auto p = MakeProbe(c);
  ASSERT_TRUE(p->Start().ok());
  at::Tensor big = at::full({3}, 1e30f);
  for (int i = 0; i < 5; ++i) at::mul(big, big);
  at::cos(big);
  EXPECT_FALSE(p->terminated());
  ASSERT_TRUE(p->Stop().ok());
  EXPECT_EQ(ReadDump().entries.size(), 5u);
}

}  // namespace
}  // namespace lockstep
