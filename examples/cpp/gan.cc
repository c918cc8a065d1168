// gan: a small GAN (2-D mixture of Gaussians) trained in emulated fp16 with
// loss scaling, two optimizers (D and G) and one GradScaler; it shows how a
// shared overflow status couples the two optimizers.
//
//   --check separate  each optimizer has its own status, checked after its
//                     own backward (sequential steps, PyTorch's rule: each
//                     skips on its own, the scale update sees both)
//   --check shared    one status for both backward passes and one joint
//                     decision: D's overflow skips G's step too (what a
//                     shared NPU float status does)
//   --procs 2         two data-parallel ranks over Gloo on loopback; the
//                     ranks agree on overflow (all-reduce MAX) and the parent
//                     checks that their step/skip traces are identical
//
// fp16 emulation: weights are read through an fp16 copy and activations
// stored in fp16 (Fp16Emulator); gradients are rounded the same way, in
// NPU saturation mode by default (overflow gives +-65504 and raises the
// status; the values alone would not show it). D's loss is summed over the
// batch and G's averaged, so D's gradients overflow at a smaller scale.
// Exit codes: 0 done, 1 a rank failed or the ranks disagreed, 2 usage.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <spawn.h>
#include <sys/wait.h>
#include <torch/optim/adam.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/torch/gloo_group.h"
#include "lockstep/torch/grad_scaler.h"
#include "lockstep/torch/overflow_status.h"

extern char** environ;

namespace lockstep {
namespace {

namespace fs = std::filesystem;

struct Args {
  std::string check = "separate";
  int procs = 1;
  int steps = 200;
  std::string loss_scale = "dynamic";
  int64_t growth_interval = 25;  // 0: the preset's
  std::string overflow = "saturation";
  int log_every = 100;
  uint64_t seed = 0;
  int rank = -1;  // internal: set for the ranks spawned by --procs 2
  std::string store;
};

// A two-layer perceptron whose weights and activations are emulated fp16.
struct Mlp {
  at::Tensor w1, b1, w2, b2;
  Mlp(int64_t in, int64_t hidden, int64_t out)
      : w1(at::randn({hidden, in}).mul_(0.5).requires_grad_(true)),
        b1(at::zeros({hidden}).requires_grad_(true)),
        w2(at::randn({out, hidden}).mul_(0.3).requires_grad_(true)),
        b2(at::zeros({out}).requires_grad_(true)) {}
  std::vector<at::Tensor> params() const { return {w1, b1, w2, b2}; }
  at::Tensor Forward(const at::Tensor& x, const Fp16Emulator& e) const {
    at::Tensor h = e.Apply(at::addmm(e.Apply(b1), x, e.Apply(w1).t())).tanh();
    return e.Apply(at::addmm(e.Apply(b2), e.Apply(h), e.Apply(w2).t()));
  }
  void Freeze(bool frozen) {
    for (at::Tensor& p : params()) p.requires_grad_(!frozen);
  }
  void ZeroGrad() {
    for (at::Tensor& p : params()) {
      if (p.grad().defined()) p.mutable_grad().zero_();
    }
  }
};

// Real samples: 8 Gaussians on a circle of radius 2.
at::Tensor RealBatch(int64_t n) {
  at::Tensor angle = at::randint(0, 8, {n}).to(at::kFloat).mul_(M_PI / 4);
  at::Tensor centers = at::stack({angle.cos(), angle.sin()}, 1).mul_(2.0);
  return centers + at::randn({n, 2}).mul_(0.05);
}

at::Tensor Bce(const at::Tensor& logits, float target, int64_t reduction) {
  return at::binary_cross_entropy_with_logits(
      logits, at::full_like(logits, target), {}, {}, reduction);
}

struct Trainer {
  Args a;
  Fp16Emulator emu;
  FloatStatus d_status, g_status;  // shared mode uses d_status for both
  Mlp d{2, 32, 1}, g{4, 32, 2};
  torch::optim::Adam opt_d{d.params(), torch::optim::AdamOptions(1e-3)};
  torch::optim::Adam opt_g{g.params(), torch::optim::AdamOptions(1e-3)};
  std::unique_ptr<GlooGroup> group;
  std::unique_ptr<GradScaler> scaler;
  int64_t d_local = 0, g_local = 0;  // this rank's own overflows
  std::string trace;                 // per step: D and G stepped (1) or not

  explicit Trainer(const Args& args)
      : a(args),
        emu(a.overflow == "inf-nan" ? Fp16OverflowMode::kInfNan
                                    : Fp16OverflowMode::kSaturation,
            &d_status) {}

  bool shared() const { return a.check == "shared"; }
  int64_t batch() const { return 64 * (std::max(a.rank, 0) + 1); }

  Status Init() {
    // The same initial weights on every rank (seeded before construction),
    // different data.
    at::manual_seed(a.seed * 1000 + std::max(a.rank, 0) + 1);
    if (a.rank >= 0) {
      GlooGroupOptions go{a.store, a.rank, a.procs};
      StatusOr<std::unique_ptr<GlooGroup>> gg = GlooGroup::Connect(go);
      if (!gg.ok()) return gg.status();
      group = std::move(*gg);
    }
    GradScalerOptions o;
    o.check = OverflowCheck::kValueAndStatus;
    o.mode = shared() ? StepMode::kJoint : StepMode::kPerOptimizer;
    o.status = &d_status;
    o.agreement = group.get();
    StatusOr<LossScaleOptions> ls = ParseLossScaleSpec(a.loss_scale);
    if (!ls.ok()) return ls.status();
    o.loss_scale = *ls;
    if (a.growth_interval > 0) o.loss_scale.growth_interval = a.growth_interval;
    StatusOr<GradScaler> s = GradScaler::Create(o);
    if (!s.ok()) return s.status();
    scaler = std::make_unique<GradScaler>(std::move(*s));
    if (!shared()) scaler->SetStatus(opt_g, &g_status);
    return Status::Ok();
  }

  // The scaled loss's backward; with ranks, the gradients' mean.
  Status Backward(const at::Tensor& loss, const Mlp& net) {
    scaler->Scale(loss).backward();
    if (!group) return Status::Ok();
    std::vector<at::Tensor> grads;
    for (const at::Tensor& p : net.params()) grads.push_back(p.grad());
    return group->AllReduceMean(grads);
  }

  at::Tensor DLoss(const at::Tensor& fake) {
    return Bce(d.Forward(RealBatch(batch()), emu), 1, at::Reduction::Sum) +
           Bce(d.Forward(fake.detach(), emu), 0, at::Reduction::Sum);
  }
  at::Tensor GLoss(const at::Tensor& fake) {
    return Bce(d.Forward(fake, emu), 1, at::Reduction::Mean);
  }
  at::Tensor Fake() { return g.Forward(at::randn({batch(), 4}), emu); }

  // Sequential: D's backward, check and step, then G's.
  Status StepSeparate() {
    emu.set_status(&d_status);
    d.ZeroGrad();
    LOCKSTEP_RETURN_IF_ERROR(Backward(DLoss(Fake()), d));
    StatusOr<bool> d_stepped = scaler->Step(opt_d);
    if (!d_stepped.ok()) return d_stepped.status();
    emu.set_status(&g_status);
    g.ZeroGrad();
    LOCKSTEP_RETURN_IF_ERROR(Backward(GLoss(Fake()), g));
    return scaler->Step(opt_g).status();
  }

  // Both backward passes under one status, then one joint decision.
  Status StepShared() {
    d.ZeroGrad();
    g.ZeroGrad();
    at::Tensor fake = Fake();
    LOCKSTEP_RETURN_IF_ERROR(Backward(DLoss(fake), d));
    d.Freeze(true);
    Status s = Backward(GLoss(fake), g);
    d.Freeze(false);
    LOCKSTEP_RETURN_IF_ERROR(s);
    return scaler->StepAll({&opt_d, &opt_g}).status();
  }

  void Log(int step) const {
    std::printf("%s[I] step %d: scale %g | D skipped %lld | G skipped %lld\n",
                Prefix().c_str(), step, scaler->scale(),
                (long long)scaler->skipped(opt_d),
                (long long)scaler->skipped(opt_g));
  }
  std::string Prefix() const {
    return a.rank >= 0 ? "[rank " + std::to_string(a.rank) + "] " : "";
  }

  Status Run() {
    LOCKSTEP_RETURN_IF_ERROR(Init());
    for (int step = 1; step <= a.steps; ++step) {
      LOCKSTEP_RETURN_IF_ERROR(shared() ? StepShared() : StepSeparate());
      d_local += scaler->found_inf_local(opt_d);
      g_local += scaler->found_inf_local(opt_g);
      trace += scaler->found_inf(opt_d) ? '0' : '1';
      trace += (shared() ? scaler->found_inf(opt_d) : false) ||
                       scaler->found_inf(opt_g)
                   ? '0'
                   : '1';
      LOCKSTEP_RETURN_IF_ERROR(scaler->Update());
      if (step % a.log_every == 0 || step == a.steps) Log(step);
    }
    std::printf(
        "%s[I] gan: check %s, %s mode: D skipped %lld of %d steps (own "
        "check: %lld), G skipped %lld (own check: %lld); final scale %g\n",
        Prefix().c_str(), a.check.c_str(), Fp16OverflowModeName(emu.mode()),
        (long long)scaler->skipped(opt_d), a.steps, (long long)d_local,
        (long long)scaler->skipped(opt_g), (long long)g_local, scaler->scale());
    if (!a.store.empty()) {
      std::ofstream(a.store + ".trace" + std::to_string(a.rank)) << trace;
    }
    return group ? group->Barrier() : Status::Ok();
  }
};

// --procs 2: runs this program as ranks 0 and 1 and compares their traces.
int SpawnRanks(const Args& a, char** argv) {
  fs::path dir =
      fs::temp_directory_path() / ("lockstep_gan_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string store = (dir / "store").string();
  std::vector<pid_t> pids;
  for (int r = 0; r < a.procs; ++r) {
    std::vector<std::string> args;
    for (char** p = argv; *p != nullptr; ++p) args.push_back(*p);
    args.insert(args.end(), {"--rank", std::to_string(r), "--store", store});
    std::vector<char*> cargv;
    for (std::string& s : args) cargv.push_back(s.data());
    cargv.push_back(nullptr);
    pid_t pid;
    if (posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, cargv.data(),
                    environ) != 0) {
      std::fprintf(stderr, "[E] gan: cannot start rank %d\n", r);
      return 1;
    }
    pids.push_back(pid);
  }
  int rc = 0;
  for (pid_t pid : pids) {
    int st = 0;
    waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) rc = 1;
  }
  std::vector<std::string> traces;
  for (int r = 0; r < a.procs && rc == 0; ++r) {
    std::ifstream in(store + ".trace" + std::to_string(r));
    std::string t;
    std::getline(in, t);
    traces.push_back(t);
  }
  fs::remove_all(dir);
  if (rc != 0) {
    std::fprintf(stderr, "[E] gan: a rank failed\n");
    return 1;
  }
  bool same = traces.size() == 2 && traces[0] == traces[1] &&
              traces[0].size() == size_t(2 * a.steps);
  std::printf("[%s] gan: %d ranks, %s\n", same ? "I" : "E", a.procs,
              same ? "identical step/skip decisions on every step"
                   : "the ranks' step/skip decisions differ");
  return same ? 0 : 1;
}

int Main(int argc, char** argv) {
  Args a;
  CLI::App app("A small GAN in emulated fp16 with loss scaling", "gan");
  app.add_option("--check", a.check, "one status per optimizer or shared")
      ->check(CLI::IsMember({"separate", "shared"}));
  app.add_option("--procs", a.procs, "data-parallel ranks (Gloo)")
      ->check(CLI::IsMember({1, 2}));
  app.add_option("--steps", a.steps, "training steps")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--loss-scale", a.loss_scale,
                 "fixed:SCALE or dynamic[:PRESET]");
  app.add_option("--growth-interval", a.growth_interval,
                 "good steps before the scale grows (0: the preset's)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  app.add_option("--overflow", a.overflow, "fp16 overflow behaviour")
      ->check(CLI::IsMember({"saturation", "inf-nan"}));
  app.add_option("--log-every", a.log_every, "log every N steps")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--seed", a.seed, "random seed");
  app.add_option("--rank", a.rank)->group("");  // internal
  app.add_option("--store", a.store)->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  StatusOr<LossScaleOptions> ls = ParseLossScaleSpec(a.loss_scale);
  if (!ls.ok()) {
    std::fprintf(stderr, "[E] %s\n", ls.status().message().c_str());
    return 2;
  }
  if (a.procs > 1 && a.rank < 0) return SpawnRanks(a, argv);
  at::set_num_threads(a.rank >= 0 ? 1 : 2);
  at::manual_seed(a.seed * 1000);
  Trainer t(a);
  Status s = t.Run();
  if (!s.ok()) {
    std::fprintf(stderr, "[E] %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace lockstep

int main(int argc, char** argv) { return lockstep::Main(argc, argv); }
