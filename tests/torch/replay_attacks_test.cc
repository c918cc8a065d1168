// lockstep replay against dump.json files written to attack it (issue 32,
// "Replay must run only pure, bounded operators"): each test crafts the
// dump in a temp dir, replays it, and checks that the attack did nothing
// (no file created, grown, read or opened; no read past a tensor's memory;
// the process's memory stayed small; no hang) and that the call is listed
// as not replayed with a clear reason.
#include <ATen/ATen.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>
#include <sstream>

#include "lockstep/core/file.h"
#include "lockstep/format/tensor_file.h"
#include "lockstep/torch/replay.h"
#include "lockstep/torch/tensor_bridge.h"
#include "torch/probe_testing.h"
#include "torch/replay_internal.h"
#include "torch/replay_worker.h"
#include "torch/shadow.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using testing::ProbeTest;

// Recorded values as the probe writes them.
std::string Int(int64_t v) {
  return "{\"type\": \"int\", \"value\": " + std::to_string(v) + "}";
}
std::string Bool(bool v) {
  return std::string("{\"type\": \"bool\", \"value\": ") +
         (v ? "true" : "false") + "}";
}
std::string Str(const std::string& v) {
  return "{\"type\": \"str\", \"value\": \"" + v + "\"}";
}
std::string Ints(std::initializer_list<int64_t> vs) {
  std::string s = "[";
  for (int64_t v : vs) s += (s.size() > 1 ? ", " : "") + Int(v);
  return s + "]";
}

// The process's peak resident memory so far, in bytes.
int64_t PeakRss() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

class ReplayAttackTest : public ProbeTest {
 protected:
  // Saves `t` as tensor file `name` of the rank and returns its dump.json
  // dict.
  std::string Tensor(const std::string& name, const at::Tensor& t) {
    std::string dir = RankDir() + "/dump_tensor_data";
    EXPECT_TRUE(CreateDirs(dir).ok());
    StatusOr<lockstep::Tensor> h = ToHostTensor(t);
    EXPECT_TRUE(h.ok());
    EXPECT_TRUE(WriteTensorFile(dir + "/" + name, *h).ok());
    std::string shape = "[";
    for (int64_t s : t.sizes()) {
      shape += (shape.size() > 1 ? ", " : "") + std::to_string(s);
    }
    return "{\"type\": \"torch.Tensor\", \"dtype\": \"torch." +
           std::string(t.scalar_type() == at::kFloat  ? "float32"
                       : t.scalar_type() == at::kByte ? "uint8"
                                                      : "int64") +
           "\", \"shape\": " + shape + "], \"data_name\": \"" + name + "\"}";
  }
  // Writes a dump.json of one forward entry `name` calling `aten`.
  void WriteEntry(const std::string& name, const std::string& aten,
                  const std::string& args, const std::string& output) {
    ASSERT_TRUE(CreateDirs(RankDir()).ok());
    std::string json =
        "{\"task\": \"tensor\", \"level\": \"L1\", \"data\": {\"" + name +
        "\": {\"input_args\": [" + args +
        "], \"input_kwargs\": {}, \"output\": [" + output + "], \"aten\": \"" +
        aten + "\"}}}";
    ASSERT_TRUE(WriteFileAtomic(RankDir() + "/dump.json", json).ok());
  }
  // Replays the dump in this process (so that its memory is this
  // process's) unless `options` say otherwise.
  ReplayResult Replay(ReplayOptions o = InProcess()) {
    o.dump = (dir_ / "dump").string();
    StatusOr<ReplayResult> r = ReplayDump(o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : ReplayResult();
  }
  static ReplayOptions InProcess() {
    ReplayOptions o;
    o.max_call_seconds = 0;
    return o;
  }
  // The one row of `entry`, which must be "not replayable" and say `why`.
  static void ExpectRefused(const ReplayResult& r, const std::string& entry,
                            const std::string& op, const std::string& why) {
    ASSERT_EQ(r.checks.size(), 1u);
    const ReplayCheck& c = r.checks[0];
    EXPECT_EQ(c.entry, entry);
    EXPECT_EQ(c.op, op);
    EXPECT_EQ(c.verdict, ReplayVerdict::kNotReplayable);
    EXPECT_NE(c.reason.find(why), std::string::npos) << c.reason;
    EXPECT_EQ(r.replayed, 0u);
    EXPECT_FALSE(r.first_suspect);
  }
  std::string Path(const std::string& name) const {
    return (dir_ / name).string();
  }
  // aten::from_file(filename, shared, size, *, dtype, layout, device,
  // pin_memory) on `path`.
  void WriteFromFile(const std::string& path, bool shared, int64_t size) {
    std::string out = Tensor("out.pt", at::zeros({4}, at::kByte));
    WriteEntry("Torch.from_file.0.forward", "aten::from_file",
               Str(path) + ", " + Bool(shared) + ", " + Int(size) +
                   ", {\"type\": \"torch.dtype\", \"value\": "
                   "\"torch.uint8\"}, null, null, null",
               out);
  }
};

TEST_F(ReplayAttackTest, FromFileCreatingAFileIsRefused) {
  std::string target = Path("created_by_replay");
  WriteFromFile(target, /*shared=*/true, 4096);
  ReplayResult r = Replay();
  EXPECT_FALSE(fs::exists(target)) << "replay created " << target;
  ExpectRefused(r, "Torch.from_file.0.forward", "aten::from_file",
                "reads or writes files");
}

TEST_F(ReplayAttackTest, FromFileGrowingAFileIsRefused) {
  std::string target = Path("nine_bytes");
  ASSERT_TRUE(CreateDirs(dir_.string()).ok());
  ASSERT_TRUE(WriteFileAtomic(target, "123456789").ok());
  WriteFromFile(target, /*shared=*/true, int64_t{4} << 20);
  ReplayResult r = Replay();
  EXPECT_EQ(fs::file_size(target), 9u);
  EXPECT_TRUE(ReadAll(target) == "123456789");  // not printed: 4 MiB
  ExpectRefused(r, "Torch.from_file.0.forward", "aten::from_file",
                "reads or writes files");
}

TEST_F(ReplayAttackTest, FromFileReadingEtcPasswdIsRefused) {
  ASSERT_TRUE(fs::exists("/etc/passwd"));
  WriteFromFile("/etc/passwd", /*shared=*/false, 4);
  ReplayResult r = Replay();
  // Read, its bytes would be the replay's result: a suspect whose row
  // holds them (recorded 0, "float64 replay" the file's first byte).
  ExpectRefused(r, "Torch.from_file.0.forward", "aten::from_file",
                "reads or writes files");
  EXPECT_EQ(r.checks[0].reference, 0);
  EXPECT_EQ(r.checks[0].max_ulp, 0);
}

TEST_F(ReplayAttackTest, FromFileOnAFifoDoesNotHang) {
  std::string fifo = Path("fifo");
  ASSERT_TRUE(CreateDirs(dir_.string()).ok());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  WriteFromFile(fifo, /*shared=*/false, 16);
  // In this process, with no time limit: opened, the FIFO would block the
  // replay until a writer came.
  std::future<ReplayResult> replay =
      std::async(std::launch::async, [this] { return Replay(); });
  if (replay.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    ADD_FAILURE() << "replay blocked on the FIFO";
    int w = ::open(fifo.c_str(), O_WRONLY);  // releases the reader
    if (w >= 0) ::close(w);
  }
  ReplayResult r = replay.get();
  // No reader holds it open now: a writer that will not wait finds none.
  int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
  EXPECT_LT(w, 0);
  EXPECT_EQ(errno, ENXIO);
  if (w >= 0) ::close(w);
  ExpectRefused(r, "Torch.from_file.0.forward", "aten::from_file",
                "reads or writes files");
}

TEST_F(ReplayAttackTest, ReshapeAliasPastItsStorageIsRefused) {
  std::string x = Tensor("x.pt", at::arange(4, at::kFloat));
  WriteEntry("Tensor.reshape.0.forward", "aten::_reshape_alias",
             x + ", " + Ints({1 << 20}) + ", " + Ints({1}), x);
  ReplayResult r = Replay();
  ExpectRefused(r, "Tensor.reshape.0.forward", "aten::_reshape_alias",
                "a raw view");
}

// Behind the allowlist: a tensor whose sizes reach past its storage is
// refused before any call reads it, as argument or as output.
TEST_F(ReplayAttackTest, SizesPastTheStorageAreRefusedBeforeTheCall) {
  // Sizes and strides set as a crafted view would set them.
  auto set = [](at::Tensor& t, std::vector<int64_t> sizes,
                std::vector<int64_t> strides) {
    t.unsafeGetTensorImpl()->set_sizes_and_strides(c10::IntArrayRef(sizes),
                                                   c10::IntArrayRef(strides));
  };
  at::Tensor t = at::zeros({4});
  EXPECT_EQ(replay::GeometryProblem(t), "");
  set(t, {int64_t{1} << 20}, {1});
  EXPECT_NE(replay::GeometryProblem(t).find("of a 16-byte storage"),
            std::string::npos)
      << replay::GeometryProblem(t);
  at::Tensor huge = at::zeros({4});
  set(huge, {int64_t{1} << 31, 4}, {int64_t{1} << 40, 1});
  EXPECT_NE(replay::GeometryProblem(huge).find("overflow"), std::string::npos);
  at::Tensor offset = at::zeros({4});
  offset.unsafeGetTensorImpl()->set_storage_offset(3);
  set(offset, {2}, {1});
  EXPECT_NE(replay::GeometryProblem(offset), "");

  replay::BoundCall call{
      *c10::Dispatcher::singleton().findSchema({"aten::cos", ""}),
      "aten::cos",
      {t}};
  std::string why = replay::AdmitCall(&call, 32, replay::CallLimits());
  EXPECT_NE(why.find("argument self has sizes [1048576]"), std::string::npos)
      << why;
  EXPECT_EQ(call.budget, 0);
  EXPECT_THROW(replay::Call(call, {t}), replay::CallRefused);
}

TEST_F(ReplayAttackTest, Conv2dWithPadding20000IsRefusedBeforeItAllocates) {
  std::string x = Tensor("x.pt", at::ones({1, 1, 1, 1}));
  std::string w = Tensor("w.pt", at::ones({1, 1, 1, 1}));
  WriteEntry("Functional.conv2d.0.forward", "aten::conv2d",
             x + ", " + w + ", null, " + Ints({1, 1}) + ", " +
                 Ints({20000, 20000}) + ", " + Ints({1, 1}) + ", " + Int(1),
             x);
  int64_t before = PeakRss();
  ReplayResult r = Replay();
  // 40001 x 40001 in float64 is 12 GiB, and as much again for im2col.
  EXPECT_LT(PeakRss() - before, int64_t{256} << 20);
  ExpectRefused(r, "Functional.conv2d.0.forward", "aten::conv2d",
                "estimated from its schema and arguments");
  EXPECT_NE(r.checks[0].reason.find("23.8 GiB"), std::string::npos)
      << r.checks[0].reason;
  EXPECT_NE(r.checks[0].reason.find("budget of 64 MiB"), std::string::npos);
}

TEST_F(ReplayAttackTest, OnesWithAHugeSizeAndASmallOutputIsRefused) {
  std::string out = Tensor("out.pt", at::ones({4}));
  WriteEntry("Torch.ones.0.forward", "aten::ones",
             Ints({int64_t{1} << 28}) + ", null, null, null, null", out);
  int64_t before = PeakRss();
  ReplayResult r = Replay();
  EXPECT_LT(PeakRss() - before, int64_t{256} << 20);
  ExpectRefused(r, "Torch.ones.0.forward", "aten::ones",
                "would take 2 GiB (estimated");
}

// An operator LibTorch 1.13 has no shape function for: not estimated, so
// stopped at the allocation that would pass the budget, before it is made.
TEST_F(ReplayAttackTest, IndexSelectPastTheBudgetIsStoppedAtItsAllocation) {
  std::string w = Tensor("w.pt", at::ones({1, 100000}));
  std::string idx = Tensor("idx.pt", at::zeros({100000}, at::kLong));
  WriteEntry("Torch.index_select.0.forward", "aten::index_select",
             w + ", " + Int(0) + ", " + idx, Tensor("out.pt", at::ones({1})));
  int64_t before = PeakRss();
  ReplayResult r = Replay();
  EXPECT_LT(PeakRss() - before, int64_t{256} << 20);
  ExpectRefused(r, "Torch.index_select.0.forward", "aten::index_select",
                "more while running, past the call's memory budget");
}

TEST_F(ReplayAttackTest, MaxCallMemoryChangesTheBudget) {
  std::string out = Tensor("out.pt", at::ones({4}));
  WriteEntry("Torch.ones.0.forward", "aten::ones",
             Ints({10'000'000}) + ", null, null, null, null", out);
  // 76 MiB in float64: past the default's 64 MiB.
  ExpectRefused(Replay(), "Torch.ones.0.forward", "aten::ones", "64 MiB");
  ReplayOptions big = InProcess();
  big.max_call_memory = int64_t{256} << 20;
  ReplayResult r = Replay(big);
  ASSERT_EQ(r.checks.size(), 1u);
  // It ran: its result is not the recorded one.
  EXPECT_NE(r.checks[0].reason.find("the replay gives shape [10000000]"),
            std::string::npos)
      << r.checks[0].reason;
}

TEST_F(ReplayAttackTest, MaxCallMemoryCanRefuseOrdinaryCalls) {
  DumpTiny(Config(ProbeTask::kTensor));
  ReplayOptions tiny = InProcess();
  tiny.max_call_memory = 4;  // bytes: less than any output
  ReplayResult t = Replay(tiny);
  EXPECT_EQ(t.replayed, 0u);
  for (const ReplayCheck& c : t.checks) {
    EXPECT_EQ(c.verdict, ReplayVerdict::kNotReplayable) << c.entry;
    EXPECT_NE(c.reason.find("--max-call-memory"), std::string::npos)
        << c.reason;
  }
}

TEST_F(ReplayAttackTest, ASlowCallIsStoppedAtTheTimeLimit) {
  at::Tensor a = at::ones({2048, 2048});
  std::string x = Tensor("a.pt", a);
  std::string y = Tensor("b.pt", at::ones({4}));
  ASSERT_TRUE(CreateDirs(RankDir()).ok());
  std::string json =
      "{\"task\": \"tensor\", \"level\": \"L1\", \"data\": {"
      "\"Torch.mm.0.forward\": {\"input_args\": [" +
      x + ", " + x + "], \"input_kwargs\": {}, \"output\": [" +
      Tensor("c.pt", at::ones({1})) +
      "], \"aten\": \"aten::mm\"}, "
      "\"Torch.cos.0.forward\": {\"input_args\": [" +
      y + "], \"input_kwargs\": {}, \"output\": [" +
      Tensor("cos.pt", at::cos(at::ones({4}))) +
      "], \"aten\": \"aten::cos\"}}}";
  ASSERT_TRUE(WriteFileAtomic(RankDir() + "/dump.json", json).ok());
  ReplayOptions o;
  o.max_call_seconds = 0.1;  // 2048^3 multiply-adds, three times
  auto start = std::chrono::steady_clock::now();
  ReplayResult r = Replay(o);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  ASSERT_EQ(r.checks.size(), 2u);
  EXPECT_EQ(r.checks[0].entry, "Torch.mm.0.forward");
  EXPECT_EQ(r.checks[0].verdict, ReplayVerdict::kNotReplayable);
  EXPECT_NE(r.checks[0].reason.find("ran past the time limit of 0.1 s"),
            std::string::npos)
      << r.checks[0].reason;
  EXPECT_NE(r.checks[0].reason.find("--max-call-seconds"), std::string::npos);
  // The next entry runs in a fresh process.
  EXPECT_EQ(r.checks[1].entry, "Torch.cos.0.forward");
  EXPECT_EQ(r.checks[1].verdict, ReplayVerdict::kOk) << r.checks[1].reason;
}

TEST_F(ReplayAttackTest, ShadowRefusesFromFileAndHugeCallsToo) {
  std::string target = Path("shadow_created");
  c10::OperatorHandle from_file =
      *c10::Dispatcher::singleton().findSchema({"aten::from_file", ""});
  std::vector<ReplayCheck> c = ShadowCheck(
      &from_file,
      {c10::IValue(target), c10::IValue(true), c10::IValue(int64_t{64}),
       c10::IValue(), c10::IValue(), c10::IValue(), c10::IValue()},
      {c10::IValue(at::zeros({64}))});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].verdict, ReplayVerdict::kNotReplayable);
  EXPECT_NE(c[0].reason.find("reads or writes files"), std::string::npos)
      << c[0].reason;
  EXPECT_FALSE(fs::exists(target));
  c10::OperatorHandle ones =
      *c10::Dispatcher::singleton().findSchema({"aten::ones", ""});
  c = ShadowCheck(&ones,
                  {c10::IValue(std::vector<int64_t>{int64_t{1} << 28}),
                   c10::IValue(), c10::IValue(), c10::IValue(), c10::IValue()},
                  {c10::IValue(at::ones({4}))});
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].verdict, ReplayVerdict::kNotReplayable);
  EXPECT_NE(c[0].reason.find("estimated"), std::string::npos) << c[0].reason;
}

TEST_F(ReplayAttackTest, OperatorsOffTheAllowlistAreNamed) {
  for (const char* op :
       {"aten::set_.source_Tensor", "aten::resize_", "aten::as_strided",
        "aten::save", "c10d::allreduce_", "aten::_foreach_add_.Scalar",
        "aten::rand", "aten::copy_sparse_to_sparse_"}) {
    EXPECT_NE(replay::OffAllowlistReason(op), "") << op;
  }
  for (const char* op : {"aten::add.Tensor", "aten::add_.Tensor",
                         "aten::conv2d", "aten::layer_norm", "aten::item"}) {
    EXPECT_EQ(replay::OffAllowlistReason(op), "") << op;
  }
}

// The time limit's machinery on its own: an entry that kills its process
// and one that never ends are each named, and every other entry is
// replayed, with entries run two at a time.
TEST(ReplayWorkerTest, AnEntryThatKillsOrHangsItsProcessIsNamed) {
  auto replay = [](size_t i) -> std::vector<ReplayCheck> {
    if (i == 3) std::abort();
    if (i == 5) ::sleep(1000);
    ReplayCheck c;
    c.entry = "e" + std::to_string(i);
    c.max_ulp = 0.5 * static_cast<double>(i);
    return {c};
  };
  std::vector<size_t> done;
  std::vector<std::vector<ReplayCheck>> out;
  ASSERT_TRUE(ReplayEntriesIsolated(
                  8, 2, 0.5, replay, [&](size_t i) { done.push_back(i); }, &out)
                  .ok());
  ASSERT_EQ(out.size(), 8u);
  EXPECT_EQ(done.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    ASSERT_EQ(out[i].size(), 1u) << i;
    const ReplayCheck& c = out[i][0];
    if (i == 3) {
      EXPECT_EQ(c.verdict, ReplayVerdict::kNotReplayable);
      EXPECT_NE(c.reason.find("killed its process (signal 6"),
                std::string::npos)
          << c.reason;
    } else if (i == 5) {
      EXPECT_EQ(c.verdict, ReplayVerdict::kNotReplayable);
      EXPECT_NE(c.reason.find("time limit of 0.5 s"), std::string::npos)
          << c.reason;
    } else {
      EXPECT_EQ(c.entry, "e" + std::to_string(i));
      EXPECT_EQ(c.max_ulp, 0.5 * static_cast<double>(i));
    }
  }
}

TEST(ReplayWorkerTest, ChecksSurviveTheirBytes) {
  ReplayCheck a;
  a.step = 3;
  a.rank = 7;
  a.entry = "Functional.conv2d.1.forward";
  a.tensor = "output.0";
  a.op = "aten::conv2d";
  a.dtype = "torch.bfloat16";
  a.kind = "accumulation";
  a.max_ulp = 2.5e4;
  a.bound = 152;
  a.bound_rule = std::string("a NUL byte: ") + '\0' + "!";
  a.worst_index = 16253;
  a.recorded = -1.008;
  a.reference = -1.014;
  a.verdict = ReplayVerdict::kSuspect;
  a.reason = "2.5e4 ulp > bound 152";
  ReplayCheck b;
  b.verdict = ReplayVerdict::kSkipped;
  std::string bytes = EncodeReplayChecks({a, b});
  std::vector<ReplayCheck> back;
  ASSERT_TRUE(DecodeReplayChecks(bytes, &back));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].entry, a.entry);
  EXPECT_EQ(back[0].bound_rule, a.bound_rule);
  EXPECT_EQ(back[0].worst_index, a.worst_index);
  EXPECT_EQ(back[0].recorded, a.recorded);
  EXPECT_EQ(back[0].verdict, a.verdict);
  EXPECT_EQ(back[0].step, 3);
  EXPECT_TRUE(std::isnan(back[1].cpu_ulp));
  EXPECT_EQ(back[1].verdict, ReplayVerdict::kSkipped);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    EXPECT_FALSE(DecodeReplayChecks(bytes.substr(0, cut), &back)) << cut;
  }
}

}  // namespace
}  // namespace lockstep
