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
bool g_started = false;  // start() ran; g_probe is null if the dump failed

void Check(const lockstep::Status& st) {
  TORCH_CHECK(st.ok(), "lockstep: ", st.message());
}

// A dump that cannot be written (unwritable or full disk) must not stop the
// training loop: start/step/stop return the problem as a string, which
// python/lockstep_probe.py turns into a warning ("" when all went well).
// Other errors (a bad config, misuse) raise.
std::string IoProblem(const lockstep::Status& st) {
  if (st.ok()) return "";
  if (st.code() != lockstep::StatusCode::kIoError) Check(st);
  return "lockstep: " + st.message() +
         "; training continues, the dump is incomplete";
}

std::string Start(std::string config) {
  std::lock_guard<std::mutex> lock(g_mu);
  TORCH_CHECK(!g_started,
              "lockstep: a probe is already started; call stop() first");
  bool text = config.find('{') != std::string::npos;
  auto c = text ? lockstep::ParseProbeConfig(config, "config")
                : lockstep::LoadProbeConfig(config);
  Check(c.status());
  auto p = lockstep::Probe::Create(*c);
  Check(p.status());
  g_probe = std::move(*p);
  lockstep::Status st = g_probe->Start();
  if (!st.ok()) g_probe.reset();  // no dump; step() and stop() do nothing
  std::string problem = IoProblem(st);
  g_started = true;
  return problem;
}

std::string Step() {
  std::lock_guard<std::mutex> lock(g_mu);
  TORCH_CHECK(g_started, "lockstep: step() before start()");
  return g_probe == nullptr ? "" : IoProblem(g_probe->Step());
}

std::string Stop() {
  std::lock_guard<std::mutex> lock(g_mu);
  g_started = false;
  if (g_probe == nullptr) return "";
  lockstep::Status st = g_probe->Stop();
  g_probe.reset();
  return IoProblem(st);
}

int64_t Entries() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_probe == nullptr ? 0 : g_probe->entries_in_step();
}

}  // namespace

TORCH_LIBRARY(lockstep, m) {
  m.def("start(str config) -> str", &Start);
  m.def("step() -> str", &Step);
  m.def("stop() -> str", &Stop);
  m.def("entries() -> int", &Entries);
}
