// Fuzzes replay's argument binding and the rules a call must pass before it
// runs (issue 32): an input is an entry name, a newline, and the entry's
// dump.json value. The entry is bound to an ATen schema (the tensors it
// names made up from their "shape" and "dtype", at most 64 elements),
// admitted or refused, and, admitted, run in float64 within a 16 MiB
// budget. No input may crash, run an operator off the allowlist, pass a
// tensor that reaches past its storage, or run a call that was not
// admitted.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.h"
#include "lockstep/format/json_reader.h"
#include "torch/replay_internal.h"

namespace {

using lockstep::PyValue;
using lockstep::Status;
using lockstep::StatusOr;
using lockstep::fuzz::Require;
namespace replay = lockstep::replay;

constexpr int64_t kMaxElements = 64;

std::optional<at::ScalarType> Dtype(const PyValue* d) {
  if (d == nullptr || d->kind() != PyValue::Kind::kStr) return std::nullopt;
  const std::string& s = d->as_str();
  if (s == "torch.float32") return at::kFloat;
  if (s == "torch.float64") return at::kDouble;
  if (s == "torch.float16") return at::kHalf;
  if (s == "torch.bfloat16") return at::kBFloat16;
  if (s == "torch.int64") return at::kLong;
  if (s == "torch.int32") return at::kInt;
  if (s == "torch.uint8") return at::kByte;
  if (s == "torch.bool") return at::kBool;
  return std::nullopt;
}

// A recorded tensor made up from its dict: small values, some negative,
// so that index arguments are in range only sometimes.
StatusOr<at::Tensor> MakeTensor(const PyValue& dict) {
  const PyValue* shape = dict.Find("shape");
  std::optional<at::ScalarType> dtype = Dtype(dict.Find("dtype"));
  if (shape == nullptr || shape->kind() != PyValue::Kind::kList || !dtype) {
    return Status::InvalidArgument("fuzz tensor", "no shape or dtype");
  }
  std::vector<int64_t> sizes;
  int64_t numel = 1;
  for (const PyValue& s : shape->items()) {
    if (s.kind() != PyValue::Kind::kInt || sizes.size() >= 6) {
      return Status::InvalidArgument("fuzz tensor", "bad shape");
    }
    int64_t v = s.as_int();
    if (v < 0 || v > kMaxElements || numel * v > kMaxElements) {
      return Status::InvalidArgument("fuzz tensor", "too large");
    }
    numel *= v;
    sizes.push_back(v);
  }
  at::Tensor t = (at::arange(numel, at::kDouble).remainder(7) - 2)
                     .reshape(sizes)
                     .to(*dtype);
  return t;
}

void CheckCall(replay::BoundCall call) {
  std::string why = replay::AdmitCall(&call, 64, replay::CallLimits{16 << 20});
  if (!why.empty()) {
    Require(call.budget == 0);
    bool refused = false;
    try {
      replay::Call(call, call.args);
    } catch (const replay::CallRefused&) {
      refused = true;
    }
    Require(refused);  // never run what was not admitted
    return;
  }
  Require(call.budget == 16 << 20);
  Require(replay::OffAllowlistReason(call.name).empty());
  for (const c10::IValue& v : call.args) {
    if (v.isTensor()) Require(replay::GeometryProblem(v.toTensor()).empty());
  }
  try {
    at::NoGradGuard no_grad;
    std::vector<c10::IValue> out =
        replay::Call(call, replay::Prepare(call, replay::Mode::kFloat64));
    for (const c10::IValue& v : out) {
      if (v.isTensor()) Require(replay::GeometryProblem(v.toTensor()).empty());
    }
  } catch (const std::exception&) {
    // LibTorch refusing the arguments, or the budget: a row, not a crash.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool once = [] {
    at::set_num_threads(1);
    return true;
  }();
  (void)once;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t nl = text.find('\n');
  std::string name = nl == std::string_view::npos
                         ? "Torch.add.0.forward"
                         : std::string(text.substr(0, nl));
  if (nl != std::string_view::npos) text.remove_prefix(nl + 1);
  StatusOr<PyValue> entry = lockstep::ParsePyJson(text, "fuzz.json");
  if (!entry.ok() || entry->kind() != PyValue::Kind::kDict) return 0;
  StatusOr<replay::BoundCall> call = replay::BindCall(name, *entry, MakeTensor);
  if (!call.ok()) return 0;
  CheckCall(std::move(*call));
  return 0;
}
