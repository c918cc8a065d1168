// The probe's life: a process killed mid-step, one active probe per
// process, Stop, a stopped probe, I/O errors at Start.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "lockstep/torch/probe.h"
#include "torch/probe_testing.h"

namespace lockstep {
namespace {

using testing::AllTinyNames;
using testing::Names;
using testing::ProbeTest;
using testing::RunTiny;
using testing::Tiny;
using testing::TinyBackwardNames;
using testing::TinyForwardNames;
namespace fs = std::filesystem;

// The child of the crash test: two full steps, then half of a third, then
// an exit that runs no destructor (as a kill would). Returns an exit code.
int RunAndDieMidStep(const ProbeConfig& c, bool write_behind) {
  at::set_num_threads(1);  // no OpenMP pool shared with the parent
  ProbeOptions o;
  o.rank = 0;
  o.write_behind = write_behind;
  StatusOr<std::unique_ptr<Probe>> p = Probe::Create(c, o);
  Tiny m;
  if (!p.ok() || !(*p)->Start().ok()) return 10;
  for (int step = 0; step < 2; ++step) {
    RunTiny(m);
    if (!(*p)->Step().ok()) return 11;
  }
  RunTiny(m, /*backward=*/false);
  if ((*p)->entries_in_step() != 4) return 12;
  ::_exit(0);
}

TEST_F(ProbeTest, KilledMidStepLeavesEveryFinishedStepReadable) {
  for (bool write_behind : {false, true}) {
    SCOPED_TRACE(write_behind ? "write behind" : "step by step");
    fs::remove_all(dir_);
    ProbeConfig c = Config(ProbeTask::kTensor);
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ::_exit(RunAndDieMidStep(c, write_behind));
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0);
    for (int64_t step : {0, 1}) {
      // Written behind, the last finished step's dump.json may not have
      // made it; but a dump.json that is there is whole.
      if (write_behind && step == 1 &&
          !fs::exists(RankDir(step) + "/dump.json")) {
        continue;
      }
      DumpFile d = ReadDump(step);  // lockstep's ReadDumpJson
      EXPECT_EQ(Names(d), AllTinyNames()) << "step " << step;
      // Tensor files of a finished step were written before dump.json.
      EXPECT_TRUE(fs::exists(
          RankDir(step) + "/dump_tensor_data/Torch.sum.0.forward.output.0.pt"));
    }
    // The step in progress has no dump.json (it is written when a step
    // ends), so no reader mistakes it for a finished step.
    EXPECT_FALSE(fs::exists(RankDir(2) + "/dump.json"));
  }
}

TEST_F(ProbeTest, WriteBehindWritesTheSameDumpFiles) {
  std::string text[2];
  for (bool behind : {false, true}) {
    ProbeConfig c = Config(ProbeTask::kMd5);
    c.dump_path = (dir_ / (behind ? "behind" : "sync")).string();
    ProbeOptions o;
    o.write_behind = behind;
    o.write_env = false;
    auto p = MakeProbe(c, o);
    Tiny m;
    ASSERT_TRUE(p->Start().ok());
    for (int step = 0; step < 3; ++step) {
      RunTiny(m);
      ASSERT_TRUE(p->Step().ok());
    }
    ASSERT_TRUE(p->Stop().ok());  // waits for the last one
    for (int step = 0; step < 3; ++step) {
      StatusOr<std::string> t = ReadFileToString(
          RankDir(step, 0, behind ? "behind" : "sync") + "/dump.json");
      ASSERT_TRUE(t.ok()) << t.status().ToString();
      text[behind] += *t;
    }
    EXPECT_FALSE(fs::exists(c.dump_path + "/step3")) << "empty last step";
  }
  EXPECT_EQ(text[0], text[1]);
}

TEST_F(ProbeTest, SecondActiveProbeCannotStart) {
  ProbeConfig c2 = Config();
  c2.dump_path = (dir_ / "other").string();
  auto p1 = MakeProbe(Config());
  auto p2 = MakeProbe(c2);
  ASSERT_TRUE(p1->Start().ok());
  Status st = p2->Start();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("another probe is active"), std::string::npos)
      << st.message();
  EXPECT_FALSE(p2->active());
  Status again = p1->Start();
  EXPECT_EQ(again.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(again.message().find("already started"), std::string::npos);
  at::cos(at::ones({2}));
  ASSERT_TRUE(p1->Stop().ok());
  EXPECT_EQ(Names(ReadDump()),
            (std::vector<std::string>{"Torch.ones.0.forward",
                                      "Torch.cos.0.forward"}));
  // Once the first stopped, the second may start.
  ASSERT_TRUE(p2->Start().ok());
  EXPECT_TRUE(p2->Stop().ok());
}

TEST_F(ProbeTest, StopIsIdempotentAndStepNeedsAStartedProbe) {
  auto p = MakeProbe(Config());
  EXPECT_TRUE(p->Stop().ok());  // never started
  Tiny m;
  ASSERT_TRUE(p->Start().ok());
  RunTiny(m);
  ASSERT_TRUE(p->Stop().ok());
  StatusOr<std::string> before = ReadFileToString(RankDir() + "/dump.json");
  EXPECT_TRUE(p->Stop().ok());
  EXPECT_FALSE(p->active());
  StatusOr<std::string> after = ReadFileToString(RankDir() + "/dump.json");
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(*before, *after);
  Status st = p->Step();
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
}

TEST_F(ProbeTest, StoppedProbeRecordsNothing) {
  auto p = MakeProbe(Config());
  Tiny m;
  ASSERT_TRUE(p->Start().ok());
  testing::TinyRun t = RunTiny(m, /*backward=*/false);
  ASSERT_TRUE(p->Stop().ok());
  StatusOr<std::string> before = ReadFileToString(RankDir() + "/dump.json");
  // The backward of a forward seen while active, and new operators.
  t.s.backward();
  RunTiny(m);
  EXPECT_EQ(p->entries_in_step(), 4);  // the stopped step's count
  StatusOr<std::string> after = ReadFileToString(RankDir() + "/dump.json");
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(*before, *after);
  EXPECT_EQ(Names(ReadDump()), TinyForwardNames());
}

TEST_F(ProbeTest, DestroyingAnActiveProbeWritesItsStep) {
  {
    auto p = MakeProbe(Config());
    Tiny m;
    ASSERT_TRUE(p->Start().ok());
    RunTiny(m);
  }
  EXPECT_EQ(Names(ReadDump()), AllTinyNames());
}

TEST_F(ProbeTest, StopGuardStopsAtScopeEnd) {
  auto p = MakeProbe(Config());
  {
    ProbeStopGuard guard(p.get());
    ASSERT_TRUE(p->Start().ok());
    EXPECT_TRUE(p->active());
  }
  EXPECT_FALSE(p->active());
}

TEST_F(ProbeTest, DumpPathUnderAFileFailsAtStartAndLeavesNoActiveProbe) {
  fs::create_directories(dir_);
  std::string file = (dir_ / "a_file").string();
  std::ofstream(file) << "not a directory";
  ProbeConfig c = Config();
  c.dump_path = file + "/dump";
  auto p = MakeProbe(c);
  Status st = p->Start();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError) << st.ToString();
  EXPECT_NE(st.message().find(file), std::string::npos) << st.message();
  EXPECT_FALSE(p->active());
  // Training goes on, and another probe may start.
  RunTiny(Tiny());
  auto q = MakeProbe(Config());
  ASSERT_TRUE(q->Start().ok()) << "the failed probe is still registered";
  at::cos(at::ones({1}));
  EXPECT_TRUE(q->Stop().ok());
}

TEST_F(ProbeTest, CreateRejectsAnInvalidConfig) {
  ProbeConfig c = Config();
  c.dump_path.clear();
  StatusOr<std::unique_ptr<Probe>> p = Probe::Create(c);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("dump_path"), std::string::npos);
}

TEST_F(ProbeTest, RedumpingIntoAnEarlierDumpIsRefused) {
  // A 2-step run, then another run into the same directory: its steps
  // would mix with the old ones (a compare would cover stale steps).
  ProbeConfig c = Config(ProbeTask::kTensor);
  {
    std::unique_ptr<Probe> p = MakeProbe(c);
    Tiny m;
    ASSERT_TRUE(p->Start().ok());
    RunTiny(m);
    ASSERT_TRUE(p->Step().ok());
    RunTiny(m);
    ASSERT_TRUE(p->Stop().ok());
  }
  std::unique_ptr<Probe> again = MakeProbe(c);
  Status s = again->Start();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("holds an earlier dump of rank 0: step0, step1 "
                             "(2 steps)"),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(again->active());
  // Another rank's dump beside it is not this rank's: rank 1 may start.
  ProbeOptions o;
  o.rank = 1;
  std::unique_ptr<Probe> rank1 = MakeProbe(c, o);
  EXPECT_TRUE(rank1->Start().ok());
  EXPECT_TRUE(rank1->Stop().ok());
}

}  // namespace
}  // namespace lockstep
