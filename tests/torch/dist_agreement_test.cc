// Data-parallel overflow agreement over c10d/Gloo on loopback: this test
// binary re-executes itself as rank 0 and rank 1 (DistWorker.Rank, skipped
// when run directly), which rendezvous through a FileStore in a temporary
// directory, train a few scripted iterations in which one rank overflows,
// and write what they decided; the parent checks that no rank ever stepped
// while another skipped. Every wait is bounded.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <torch/optim/sgd.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "lockstep/torch/gloo_group.h"
#include "lockstep/torch/grad_scaler.h"
#include "lockstep/torch/overflow_status.h"

extern char** environ;

namespace lockstep {
namespace {

namespace fs = std::filesystem;

constexpr int kIters = 6;
constexpr int kOpts = 2;

// How rank r's optimizer o overflows at iteration i: 0 no, 1 an inf
// gradient (value check), 2 only the status flag (saturation mode).
int Overflow(int iter, int rank, int opt) {
  if (iter == 1 && rank == 1 && opt == 0) return 1;
  if (iter == 2 && rank == 0 && opt == 1) return 2;
  if (iter == 4 && opt == 0) return rank == 0 ? 1 : 2;  // both ranks
  return 0;
}

struct Line {
  int iter, opt, local, agreed, stepped;
  double scale;
};

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The worker: one rank of the scripted run.
TEST(DistWorker, Rank) {
  if (Env("LOCKSTEP_DIST_RANK").empty()) GTEST_SKIP() << "run by DistTest";
  at::set_num_threads(1);
  int rank = std::stoi(Env("LOCKSTEP_DIST_RANK"));
  fs::path dir = Env("LOCKSTEP_DIST_DIR");
  GlooGroupOptions go;
  go.store_path = (dir / "store").string();
  go.rank = rank;
  go.world_size = 2;
  go.timeout = std::chrono::milliseconds(20000);
  StatusOr<std::unique_ptr<GlooGroup>> group = GlooGroup::Connect(go);
  ASSERT_TRUE(group.ok()) << group.status().ToString();

  FloatStatus status;
  GradScalerOptions o;
  o.check = OverflowCheck::kValueAndStatus;
  o.status = &status;
  o.agreement = group->get();
  o.mode = Env("LOCKSTEP_DIST_MODE") == "joint" ? StepMode::kJoint
                                                : StepMode::kPerOptimizer;
  StatusOr<GradScaler> scaler = GradScaler::Create(o);
  ASSERT_TRUE(scaler.ok());
  std::vector<at::Tensor> params;
  std::vector<std::unique_ptr<torch::optim::SGD>> opts;
  std::vector<FloatStatus> statuses(kOpts);
  for (int k = 0; k < kOpts; ++k) {
    params.push_back(at::zeros({4}).requires_grad_(true));
    opts.push_back(std::make_unique<torch::optim::SGD>(
        std::vector<at::Tensor>{params[k]}, torch::optim::SGDOptions(0.1)));
    scaler->SetStatus(*opts[k], &statuses[k]);
  }
  std::ofstream out(dir / ("rank" + std::to_string(rank) + ".txt"));
  for (int i = 0; i < kIters; ++i) {
    for (int k = 0; k < kOpts; ++k) {
      int kind = Overflow(i, rank, k);
      float g = kind == 1 ? std::numeric_limits<float>::infinity() : 1.0f;
      params[k].mutable_grad() = at::full({4}, g);
      if (kind == 2) statuses[k].Set();
    }
    StatusOr<bool> all = scaler->StepAll({opts[0].get(), opts[1].get()});
    ASSERT_TRUE(all.ok()) << all.status().ToString();
    std::vector<Line> lines;
    for (int k = 0; k < kOpts; ++k) {
      bool moved = params[k][0].item<float>() != 0.0f;
      lines.push_back({i, k, scaler->found_inf_local(*opts[k]),
                       scaler->found_inf(*opts[k]), moved, 0});
      params[k].detach().zero_();  // "moved" is per iteration
    }
    ASSERT_TRUE(scaler->Update().ok());
    for (const Line& l : lines) {
      out << l.iter << ' ' << l.opt << ' ' << l.local << ' ' << l.agreed << ' '
          << l.stepped << ' ' << scaler->scale() << '\n';
    }
  }
  out.close();
  ASSERT_TRUE((*group)->Barrier().ok());
}

// Runs both ranks; returns false (with a failure) on timeout or crash.
bool RunRanks(const fs::path& dir, const std::string& mode) {
  std::vector<pid_t> pids;
  for (int rank = 0; rank < 2; ++rank) {
    std::vector<std::string> env = {
        "LOCKSTEP_DIST_RANK=" + std::to_string(rank),
        "LOCKSTEP_DIST_DIR=" + dir.string(), "LOCKSTEP_DIST_MODE=" + mode};
    for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
    std::vector<char*> envp;
    for (std::string& s : env) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string exe = "/proc/self/exe", filter = "--gtest_filter=DistWorker.*";
    char* argv[] = {exe.data(), filter.data(), nullptr};
    pid_t pid;
    EXPECT_EQ(
        posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv, envp.data()), 0);
    pids.push_back(pid);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool ok = true;
  for (pid_t pid : pids) {
    int st = 0;
    while (waitpid(pid, &st, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        for (pid_t p : pids) kill(p, SIGKILL);
        waitpid(pid, &st, 0);
        ADD_FAILURE() << "rank process " << pid << " timed out";
        ok = false;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    bool exited_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    EXPECT_TRUE(exited_ok) << "rank process status " << st;
    ok = ok && exited_ok;
  }
  return ok;
}

std::vector<Line> Read(const fs::path& file) {
  std::ifstream in(file);
  std::vector<Line> lines;
  Line l;
  while (in >> l.iter >> l.opt >> l.local >> l.agreed >> l.stepped >> l.scale) {
    lines.push_back(l);
  }
  return lines;
}

class DistTest : public ::testing::TestWithParam<const char*> {};

TEST_P(DistTest, NoRankStepsWhenAnotherSkipped) {
  fs::path dir = fs::path(::testing::TempDir()) /
                 ("lockstep_dist_" + std::to_string(getpid()) + GetParam());
  fs::remove_all(dir);
  fs::create_directories(dir);
  ASSERT_TRUE(RunRanks(dir, GetParam()));
  std::vector<Line> r0 = Read(dir / "rank0.txt"), r1 = Read(dir / "rank1.txt");
  ASSERT_EQ(r0.size(), size_t{kIters * kOpts});
  ASSERT_EQ(r1.size(), r0.size());
  bool joint = std::string(GetParam()) == "joint";
  for (size_t j = 0; j < r0.size(); ++j) {
    const Line& a = r0[j];
    const Line& b = r1[j];
    SCOPED_TRACE("iteration " + std::to_string(a.iter) + " optimizer " +
                 std::to_string(a.opt));
    EXPECT_EQ(a.local, Overflow(a.iter, 0, a.opt) != 0);
    EXPECT_EQ(b.local, Overflow(a.iter, 1, a.opt) != 0);
    EXPECT_EQ(a.agreed, a.local || b.local);
    EXPECT_EQ(b.agreed, a.agreed);
    EXPECT_EQ(a.stepped, b.stepped) << "one rank stepped, the other skipped";
    bool any_opt = r0[j - j % kOpts].agreed || r0[j - j % kOpts + 1].agreed;
    EXPECT_EQ(a.stepped, !(joint ? any_opt : a.agreed));
    EXPECT_EQ(a.scale, b.scale);
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Modes, DistTest,
                         ::testing::Values("per-optimizer", "joint"));

TEST(GlooGroupTest, MissingRankTimesOutWithAnIoError) {
  fs::path dir = fs::path(::testing::TempDir()) /
                 ("lockstep_dist_alone_" + std::to_string(getpid()));
  fs::create_directories(dir);
  GlooGroupOptions go;
  go.store_path = (dir / "store").string();
  go.rank = 0;
  go.world_size = 2;
  go.timeout = std::chrono::milliseconds(1500);
  auto start = std::chrono::steady_clock::now();
  StatusOr<std::unique_ptr<GlooGroup>> group = GlooGroup::Connect(go);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  ASSERT_FALSE(group.ok());
  EXPECT_EQ(group.status().code(), StatusCode::kIoError);
  EXPECT_NE(group.status().message().find("rendezvous"), std::string::npos)
      << group.status().message();
  go.rank = 2;
  EXPECT_EQ(GlooGroup::Connect(go).status().code(),
            StatusCode::kInvalidArgument);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lockstep
