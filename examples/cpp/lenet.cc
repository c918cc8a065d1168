// lenet: trains LeNet-5 on synthetic, seeded data (the MindSpore loss-scale
// tutorial's setting: 1x32x32 images, 10 classes) and optionally dumps every
// operator with lockstep's probe. Two runs that differ only in --dtype or
// --fault give the two dumps `lockstep compare` is for.
//
//   lenet --steps 3 --seed 1 --dump ref
//   lenet --steps 3 --seed 1 --dump tgt --fault conv2-bf16
//   lockstep compare tgt ref
//
// The data are drawn from lockstep's Philox streams (numerics/philox.h), so
// they are the same bits on every machine; the weights from LibTorch's CPU
// generator seeded with --seed.
#include <ATen/ATen.h>
#include <torch/nn/functional/loss.h>
#include <torch/optim/sgd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "examples/cpp/lenet_faults.h"
#include "examples/cpp/lenet_model.h"
#include "lockstep/numerics/philox.h"
#include "lockstep/torch/grad_scaler.h"
#include "lockstep/torch/probe.h"
#include "lockstep/torch/seed.h"

namespace {

using lockstep_examples::ActDType;

struct Args {
  int64_t steps = 5;
  uint64_t seed = 1;
  int64_t batch = 32;
  std::string dtype = "fp32";
  std::string dump;
  std::string config;
  std::string task = "statistics";
  std::string tensor_format = "pt";
  std::string level = "L1";
  std::string fault = "none";
  std::string log;
  std::string loss_scale;
  double lr = 0.01;
  int threads = 2;
  bool deterministic = false;
  bool no_onednn = false;
};

// A batch of images and labels for `step`: element i of the stream is
// Philox(seed, offset = step)[i], so any step can be regenerated alone.
std::pair<at::Tensor, at::Tensor> Batch(const Args& a, int64_t step) {
  at::DisableRecordFunctionGuard data_loading_is_not_dumped;
  int64_t n = a.batch * 32 * 32;
  at::Tensor x = at::empty({a.batch, 1, 32, 32}, at::kFloat);
  lockstep::FillNormal(a.seed, 2 * static_cast<uint64_t>(step), 0, n,
                       x.data_ptr<float>());
  std::vector<uint32_t> bits(a.batch);
  lockstep::FillUint32(a.seed, 2 * static_cast<uint64_t>(step) + 1, 0, a.batch,
                       bits.data());
  at::Tensor y = at::empty({a.batch}, at::kLong);
  int64_t* labels = y.data_ptr<int64_t>();
  for (int64_t i = 0; i < a.batch; ++i) labels[i] = bits[i] % 10;
  return {x, y};
}

int Fail(const std::string& msg) {
  std::fprintf(stderr, "[E] lenet | %s\n", msg.c_str());
  return 2;
}

// Exit status: training finished, but the dump is not complete.
constexpr int kIncomplete = 3;

// The probe's configuration: --config (msprobe config.json) or the flags.
lockstep::StatusOr<lockstep::ProbeConfig> ProbeConfigFor(const Args& a) {
  if (!a.config.empty()) {
    LOCKSTEP_ASSIGN_OR_RETURN(lockstep::ProbeConfig c,
                              lockstep::LoadProbeConfig(a.config));
    if (!a.dump.empty()) c.dump_path = a.dump;
    return c;
  }
  lockstep::ProbeConfig c;
  c.dump_path = a.dump;
  LOCKSTEP_ASSIGN_OR_RETURN(c.task, lockstep::ParseProbeTask(a.task));
  LOCKSTEP_ASSIGN_OR_RETURN(c.level, lockstep::ParseProbeLevel(a.level));
  LOCKSTEP_ASSIGN_OR_RETURN(c.tensor_format,
                            lockstep::ParseTensorFormat(a.tensor_format));
  return c;
}

int Train(const Args& a, lockstep::Probe* probe) {
  at::set_num_threads(a.threads);
  if (a.no_onednn) at::globalContext().setUserEnabledMkldnn(false);
  lockstep::SeedAll(a.seed, a.deterministic);
  lockstep_examples::LeNet model;
  model->probe = probe;
  if (a.dtype == "bf16") {
    model->to(at::kBFloat16);
    model->act = ActDType::kBFloat16;
  } else if (a.dtype == "fp16") {
    model->act = ActDType::kFloat16Emulated;
  }
  lockstep_examples::Fault fault = lockstep_examples::Fault::kNone;
  lockstep_examples::ParseFault(a.fault, &fault);
  torch::optim::SGD opt(model->parameters(),
                        torch::optim::SGDOptions(a.lr).momentum(0.9));
  std::optional<lockstep::GradScaler> scaler;
  if (!a.loss_scale.empty()) {
    auto made = lockstep::GradScaler::FromSpec(a.loss_scale);
    if (!made.ok()) return Fail("--loss-scale: " + made.status().message());
    scaler.emplace(std::move(*made));
  }
  std::unique_ptr<std::ofstream> log;
  if (!a.log.empty()) {
    log = std::make_unique<std::ofstream>(a.log);
    if (!*log) return Fail(a.log + ": cannot write the loss log");
    *log << "step,loss\n";
  }
  // The probe never stops training: a dump that cannot be written is
  // warned about, training goes on, and the exit status is 3 (kIncomplete).
  bool incomplete = false;
  auto warn = [&](const std::string& what, const lockstep::Status& st) {
    std::fprintf(stderr, "[W] lenet | %s: %s; training continues\n",
                 what.c_str(), st.message().c_str());
    incomplete = true;
  };
  if (probe != nullptr) {
    probe->RegisterModel(*model);
    lockstep::Status st = probe->Start();
    if (!st.ok()) {
      if (st.code() != lockstep::StatusCode::kIoError) {
        return Fail(st.message());
      }
      warn("probe not started, no dump", st);
      probe = nullptr;
      model->probe = nullptr;
    }
  }
  for (int64_t step = 0; step < a.steps; ++step) {
    auto [x, y] = Batch(a, step);
    if (a.dtype == "bf16") x = x.to(at::kBFloat16);
    opt.zero_grad();
    at::Tensor logits;
    {
      std::unique_ptr<lockstep_examples::FaultScope> f;
      if (fault != lockstep_examples::Fault::kNone) {
        f = std::make_unique<lockstep_examples::FaultScope>(fault);
      }
      logits = model->forward(x);
    }
    at::Tensor loss = at::cross_entropy_loss(logits.to(at::kFloat), y);
    if (scaler) {
      scaler->Scale(loss).backward();
      auto stepped = scaler->Step(opt);
      lockstep::Status st = stepped.ok() ? scaler->Update() : stepped.status();
      if (!st.ok()) return Fail(st.message());
      std::printf("step %lld loss scale %g %s\n", static_cast<long long>(step),
                  scaler->scale(), *stepped ? "applied" : "skipped (overflow)");
    } else {
      loss.backward();
      opt.step();
    }
    double l = loss.item<double>();
    std::printf("step %lld loss %.9g\n", static_cast<long long>(step), l);
    if (log) *log << step << "," << l << "\n";
    if (probe != nullptr) {
      lockstep::Status st = probe->Step();
      if (!st.ok()) warn("probe, step " + std::to_string(step), st);
    }
  }
  if (probe != nullptr) {
    lockstep::Status st = probe->Stop();
    if (!st.ok()) warn("probe, last step", st);
  }
  if (incomplete) {
    std::fprintf(
        stderr,
        "[W] lenet | training finished; the dump is incomplete (see the "
        "warnings above and \"skipped\" in its dump.json files)\n");
    return kIncomplete;
  }
  if (probe != nullptr) std::printf("[I] dump written to %s\n", a.dump.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{
      "LeNet-5 on synthetic seeded data; dumps every operator with "
      "lockstep's probe when --dump is given."};
  app.add_option("--steps", a.steps, "training steps")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--seed", a.seed, "seed of the data and the weights");
  app.add_option("--batch", a.batch, "batch size")->check(CLI::Range(1, 4096));
  app.add_option("--dtype", a.dtype,
                 "fp32, bf16 (weights and activations), or fp16 (activations "
                 "rounded through half; LibTorch 1.13 computes little in "
                 "half on a CPU)")
      ->check(CLI::IsMember({"fp32", "bf16", "fp16"}));
  app.add_option("--dump", a.dump, "dump directory (msprobe layout)");
  app.add_option("--config", a.config,
                 "msprobe-style config.json for the probe (overrides "
                 "--task/--level; --dump overrides its dump_path)")
      ->check(CLI::ExistingFile);
  app.add_option("--task", a.task,
                 "statistics, tensor, md5, overflow_check or shadow")
      ->check(CLI::IsMember(
          {"statistics", "tensor", "md5", "overflow_check", "shadow"}));
  app.add_option("--tensor-format", a.tensor_format,
                 "how tensor mode stores tensors: pt or npy (one file each, "
                 "msprobe's layout; msprobe's PyTorch compare reads pt) or "
                 "pack (one dump_tensor_data.pack per step and rank; "
                 "lockstep export converts it)")
      ->capture_default_str()
      ->check(CLI::IsMember({"pt", "npy", "pack"}));
  app.add_option("--level", a.level, "L1 (operators), L0 (modules) or mix")
      ->check(CLI::IsMember({"L0", "L1", "mix"}));
  app.add_option("--fault", a.fault,
                 "inject a precision fault: none, conv2-bf16 (the second "
                 "conv2d runs in bfloat16), fc2-ulp (the second linear is "
                 "4 ulp off)")
      ->check(CLI::IsMember({"none", "conv2-bf16", "fc2-ulp"}));
  app.add_option("--log", a.log, "write step,loss CSV here");
  app.add_option("--loss-scale", a.loss_scale,
                 "loss scaling: fixed:S (e.g. fixed:1024), dynamic, or "
                 "dynamic:PRESET (pytorch, mindspore, deepspeed, megatron); "
                 "logs the scale and skipped steps");
  app.add_option("--lr", a.lr, "SGD learning rate (momentum 0.9)");
  app.add_option("--threads", a.threads, "LibTorch intra-op threads")
      ->check(CLI::Range(1, 256));
  app.add_flag("--deterministic", a.deterministic,
               "use deterministic algorithms only");
  app.add_flag("--no-onednn", a.no_onednn,
               "compute without LibTorch's oneDNN (mkldnn) kernels, as "
               "torch.backends.mkldnn.enabled = False does");
  app.footer(
      "Exit status: 0 trained (and dumped); 2 bad arguments or a training "
      "error; 3 trained, but the dump is incomplete (an unwritable or full "
      "disk: the probe warns and training goes on).");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::unique_ptr<lockstep::Probe> probe;
  if (!a.dump.empty() || !a.config.empty()) {
    auto config = ProbeConfigFor(a);
    if (!config.ok()) return Fail(config.status().message());
    lockstep::ProbeOptions options;
    options.run_info = {
        {"dtype", a.dtype},
        {"fault", a.fault},
        {"loss_scale", a.loss_scale.empty() ? "off" : a.loss_scale},
        {"batch", std::to_string(a.batch)}};
    auto p = lockstep::Probe::Create(*config, options);
    if (!p.ok()) return Fail(p.status().message());
    probe = std::move(*p);
  }
  try {
    return Train(a, probe.get());
  } catch (const c10::Error& e) {
    return Fail(std::string("LibTorch: ") + e.what_without_backtrace());
  } catch (const std::exception& e) {  // e.g. oneDNN's dnnl::error
    return Fail(std::string("LibTorch: ") + e.what());
  }
}
