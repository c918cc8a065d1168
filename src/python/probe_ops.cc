// The probe as LibTorch custom operators, so that a Python training loop is
// dumped by the same C++ code: build/lib/liblockstep_py.so, loaded with
// torch.ops.load_library (python/lockstep_probe.py wraps it).
//
//   torch.ops.lockstep.start(config)  config: a config.json path or its text
//   torch.ops.lockstep.step()         ends a step (dump.json written)
//   torch.ops.lockstep.stop()
//   torch.ops.lockstep.entries()      entries recorded in the current step
//
// Errors become Python RuntimeErrors carrying lockstep's message.
#include <torch/library.h>

#include <memory>
#include <mutex>
#include <string>

#include "lockstep/format/probe_config.h"
#include "lockstep/torch/probe.h"

namespace {

std::mutex g_mu;
std::unique_ptr<lockstep::Probe> g_probe;

void Check(const lockstep::Status& st) {
  TORCH_CHECK(st.ok(), "lockstep: ", st.message());
}

void Start(std::string config) {
  std::lock_guard<std::mutex> lock(g_mu);
  TORCH_CHECK(g_probe == nullptr || !g_probe->active(),
              "lockstep: a probe is already started; call stop() first");
  bool text = config.find('{') != std::string::npos;
  auto c = text ? lockstep::ParseProbeConfig(config, "config")
                : lockstep::LoadProbeConfig(config);
  Check(c.status());
  auto p = lockstep::Probe::Create(*c);
  Check(p.status());
  g_probe = std::move(*p);
  Check(g_probe->Start());
}

void Step() {
  std::lock_guard<std::mutex> lock(g_mu);
  TORCH_CHECK(g_probe != nullptr, "lockstep: step() before start()");
  Check(g_probe->Step());
}

void Stop() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_probe == nullptr) return;
  lockstep::Status st = g_probe->Stop();
  g_probe.reset();
  Check(st);
}

int64_t Entries() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_probe == nullptr ? 0 : g_probe->entries_in_step();
}

}  // namespace

TORCH_LIBRARY(lockstep, m) {
  m.def("start(str config) -> ()", &Start);
  m.def("step() -> ()", &Step);
  m.def("stop() -> ()", &Stop);
  m.def("entries() -> int", &Entries);
}
