// The probe as LibTorch custom operators, so that a Python training loop is
// dumped by the same C++ code: build/lib/liblockstep_py.so, loaded with
// torch.ops.load_library (python/lockstep_probe/__init__.py wraps it).
//
//   torch.ops.lockstep.start(config, skip)  config: a config.json path or
//                                    its text; skip: a path prefix whose
//                                    frames stack.json leaves out
//   torch.ops.lockstep.step()        ends a step (dump.json written)
//   torch.ops.lockstep.stop()
//   torch.ops.lockstep.entries()     entries recorded in the current step
//   torch.ops.lockstep.status()      the probe's state as integers, named
//                                    by status_fields() in the same order
//   torch.ops.lockstep.status_fields() ["active", "step", "rank", ...]
//   torch.ops.lockstep.module_begin(module, inputs, names, params) -> token
//   torch.ops.lockstep.module_end(token, outputs)
//   torch.ops.lockstep.register_params(module, names, params)
//   torch.ops.lockstep.clear_params()
//   torch.ops.lockstep.save(name, tensor)   entry "{name}.{n}.debug"
//   torch.ops.lockstep.device_stats(tensor) [max, min, sum, sum of
//                                    squares] by the probe's CUDA kernel, as
//                                    a CPU double tensor (for tests; raises
//                                    where the kernel does not handle it)
//   torch.ops.lockstep.device_crc(tensor) the CRC-32 of its bytes by the
//                                    probe's CUDA kernel (int; for tests)
//
// Errors become Python RuntimeErrors carrying lockstep's message.
//
// stack.json: the Python frames of each forward entry's call, read with
// the Python C API on the thread of the call (it holds no GIL while an
// operator runs; PyGILState_Ensure takes it back with that thread's
// frames). A name is read once per run (ProbeOptions::stack_frames), so
// the steady-state cost is a lookup per entry.
#ifdef LOCKSTEP_HAVE_PYTHON_H
#include <Python.h>
#endif
#include <ATen/Functions.h>
#include <torch/library.h>

#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/format/probe_config.h"
#include "lockstep/torch/probe.h"
#include "torch/device_stats.h"

namespace {

std::mutex g_mu;
std::shared_ptr<lockstep::Probe> g_probe;
bool g_started = false;  // start() ran; g_probe is null if the dump failed
std::string g_skip_prefix;

void Check(const lockstep::Status& st) {
  TORCH_CHECK(st.ok(), "lockstep: ", st.message());
}

// A dump that cannot be written (unwritable or full disk, a folder removed
// while the run goes on: NotFound) must not stop the training loop:
// start/step/stop return the problem as a string, which python/
// lockstep_probe turns into a warning ("" when all went well). Other errors
// (a bad config, misuse) raise.
std::string IoProblem(const lockstep::Status& st) {
  if (st.ok()) return "";
  if (st.code() != lockstep::StatusCode::kIoError &&
      st.code() != lockstep::StatusCode::kNotFound) {
    Check(st);
  }
  return "lockstep: " + st.message() +
         "; training continues, the dump is incomplete";
}

#ifdef LOCKSTEP_HAVE_PYTHON_H
// A str object's UTF-8 text ("" for anything else).
std::string Text(PyObject* s) {
  if (s == nullptr || !PyUnicode_Check(s)) return "";
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(s, &n);
  if (p == nullptr) {
    PyErr_Clear();
    return "";
  }
  return std::string(p, static_cast<size_t>(n));
}

// Line `line` of `file`, stripped, through linecache (as traceback does);
// remembered, as the same lines recur. REQUIRES: the GIL.
const std::string& SourceLine(const std::string& file, int line) {
  static std::map<std::pair<std::string, int>, std::string> lines;
  auto [it, fresh] = lines.try_emplace({file, line});
  if (!fresh) return it->second;
  static PyObject* getline = [] {
    PyObject* m = PyImport_ImportModule("linecache");
    PyObject* f = m ? PyObject_GetAttrString(m, "getline") : nullptr;
    Py_XDECREF(m);
    return f;
  }();
  if (getline == nullptr) {
    PyErr_Clear();
    return it->second;
  }
  PyObject* r = PyObject_CallFunction(getline, "si", file.c_str(), line);
  if (r == nullptr) {
    PyErr_Clear();
    return it->second;
  }
  std::string s = Text(r);
  Py_DECREF(r);
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  if (b != std::string::npos) it->second = s.substr(b, e - b + 1);
  return it->second;
}

// The calling thread's Python frames, innermost first, in msprobe's
// stack.json form; frames under g_skip_prefix (the wrapper's own) left out.
std::vector<std::string> PythonFrames() {
  std::vector<std::string> out;
  if (!Py_IsInitialized()) return out;
  PyGILState_STATE gil = PyGILState_Ensure();
  PyFrameObject* f = PyEval_GetFrame();  // borrowed
  Py_XINCREF(f);
  for (int depth = 0; f != nullptr && depth < 64; ++depth) {
    PyCodeObject* code = PyFrame_GetCode(f);  // new reference
    std::string file = Text(code->co_filename);
    // The wrapper's frames, and torch.ops' call of a probe operator (the
    // innermost frame of a module entry), are the probe's, not the user's.
    bool own = (!g_skip_prefix.empty() && file.rfind(g_skip_prefix, 0) == 0) ||
               (out.empty() && file.ends_with("/torch/_ops.py"));
    if (!own) {
      int line = PyFrame_GetLineNumber(f);
      out.push_back("File " + file + ", line " + std::to_string(line) +
                    ", in " + Text(code->co_name) + ", \n " +
                    SourceLine(file, line));
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(f);  // new reference
    Py_DECREF(f);
    f = back;
  }
  Py_XDECREF(f);
  PyGILState_Release(gil);
  return out;
}

#endif  // LOCKSTEP_HAVE_PYTHON_H

// "" when every key of the config JSON is one lockstep or msprobe has; else
// the problem (ProbeConfigKeysProblem), for the Python probe to raise.
std::string ConfigKeysProblem(std::string config) {
  return lockstep::ProbeConfigKeysProblem(config);
}

// `rank`: this process's rank (torch.distributed's, from Python), or -1 for
// $RANK or 0. `write_behind`: ProbeOptions::write_behind.
std::string Start(std::string config, std::string skip, int64_t rank,
                  bool write_behind) {
  std::lock_guard<std::mutex> lock(g_mu);
  TORCH_CHECK(!g_started,
              "lockstep: a probe is already started; call stop() first");
  bool text = config.find('{') != std::string::npos;
  auto c = text ? lockstep::ParseProbeConfig(config, "config")
                : lockstep::LoadProbeConfig(config);
  Check(c.status());
  g_skip_prefix = std::move(skip);
  lockstep::ProbeOptions options;
  options.rank = rank;
  options.write_behind = write_behind;
#ifdef LOCKSTEP_HAVE_PYTHON_H
  options.stack_frames = PythonFrames;
#endif
  auto p = lockstep::Probe::Create(*c, options);
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

// The names of ProbeStatus's integers, in its order: the one place that
// says which is which (the Python wrapper reads them by name).
std::vector<std::string> ProbeStatusFields() {
  return {"active", "step", "rank", "entries", "overflow_count", "terminated"};
}

std::vector<int64_t> ProbeStatus() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_probe == nullptr) return {g_started ? 1 : 0, -1, -1, 0, 0, 0};
  return {g_probe->active() ? 1 : 0, g_probe->step(),
          g_probe->rank(),           g_probe->entries_in_step(),
          g_probe->overflow_count(), g_probe->terminated() ? 1 : 0};
}

// The module hooks run while the probe is started; g_mu is not held while
// the probe records (its callbacks take their own lock).
std::shared_ptr<lockstep::Probe> Current() {
  std::lock_guard<std::mutex> lock(g_mu);
  return g_probe;
}

int64_t ModuleBegin(std::string module, std::vector<at::Tensor> inputs,
                    std::vector<std::string> names,
                    std::vector<at::Tensor> params) {
  std::shared_ptr<lockstep::Probe> p = Current();
  if (p == nullptr) return -1;
  TORCH_CHECK(names.size() == params.size(),
              "lockstep: module_begin: ", names.size(), " names for ",
              params.size(), " parameters");
  std::vector<std::pair<std::string, at::Tensor>> named;
  named.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    named.emplace_back(std::move(names[i]), std::move(params[i]));
  }
  return p->BeginModuleCall(module, inputs, named);
}

void ModuleEnd(int64_t token, std::vector<at::Tensor> outputs) {
  std::shared_ptr<lockstep::Probe> p = Current();
  if (p != nullptr) p->EndModuleCall(token, outputs);
}

void RegisterParams(std::string module, std::vector<std::string> names,
                    std::vector<at::Tensor> params) {
  TORCH_CHECK(names.size() == params.size(),
              "lockstep: register_params: ", names.size(), " names for ",
              params.size(), " parameters");
  std::shared_ptr<lockstep::Probe> p = Current();
  if (p != nullptr) p->RegisterParameters(module, names, params);
}

void Save(std::string name, at::Tensor value) {
  TORCH_CHECK(!name.empty(), "lockstep: save() needs a name");
  std::shared_ptr<lockstep::Probe> p = Current();
  if (p != nullptr) p->Save(name, value);
}

void ClearParams() {
  std::shared_ptr<lockstep::Probe> p = Current();
  if (p != nullptr) p->ClearParameters();
}

void Pause(bool paused) { lockstep::PauseProbeOnThisThread(paused); }

at::Tensor DeviceStats(at::Tensor t) {
  TORCH_CHECK(lockstep::DeviceStatsSupported(t),
              "lockstep: device_stats: no CUDA kernel for this tensor (",
              t.device(), ", ", t.scalar_type(), ", ", t.numel(),
              " elements) in this build");
  at::Tensor out = at::full({4}, std::numeric_limits<double>::quiet_NaN(),
                            t.options().dtype(at::kDouble));
  lockstep::LaunchDeviceStats(t, out, 0);
  return out.to(at::kCPU);
}

int64_t DeviceCrc(at::Tensor t) {
  TORCH_CHECK(lockstep::DeviceCrcSupported(t),
              "lockstep: device_crc: no CUDA kernel for this tensor (",
              t.device(), ", ", t.numel(), " elements) in this build");
  at::Tensor out = at::zeros({1}, t.options().dtype(at::kInt));
  lockstep::LaunchDeviceCrc(t, out, 0);
  return static_cast<uint32_t>(out.to(at::kCPU).item<int32_t>());
}

}  // namespace

// For ctypes (lockstep_probe's API naming mode, on every Python-level
// torch call: a dispatcher call each would cost more than the call it
// names). api: msprobe's name, NUL-terminated.
extern "C" __attribute__((visibility("default"))) void
lockstep_begin_python_api_call(const char* api, int dump, const char* args) {
  lockstep::BeginPythonApiCall(api == nullptr ? "" : api, dump != 0,
                               args == nullptr ? "" : args);
}
extern "C" __attribute__((visibility("default"))) int
lockstep_end_python_api_call() {
  return lockstep::EndPythonApiCall();
}

TORCH_LIBRARY(lockstep, m) {
  m.def(
      "start(str config, str skip='', int rank=-1, bool write_behind=False) "
      "-> str",
      &Start);
  m.def("step() -> str", &Step);
  m.def("config_keys_problem(str config) -> str", &ConfigKeysProblem);
  m.def("stop() -> str", &Stop);
  m.def("entries() -> int", &Entries);
  m.def("status() -> int[]", &ProbeStatus);
  m.def("status_fields() -> str[]", &ProbeStatusFields);
  m.def(
      "module_begin(str module, Tensor[] inputs, str[] names, "
      "Tensor[] params) -> int",
      &ModuleBegin);
  m.def("module_end(int token, Tensor[] outputs) -> ()", &ModuleEnd);
  m.def("register_params(str module, str[] names, Tensor[] params) -> ()",
        &RegisterParams);
  m.def("clear_params() -> ()", &ClearParams);
  m.def("save(str name, Tensor value) -> ()", &Save);
  m.def("pause(bool paused) -> ()", &Pause);
  m.def("device_stats(Tensor t) -> Tensor", &DeviceStats);
  m.def("device_crc(Tensor t) -> int", &DeviceCrc);
}
