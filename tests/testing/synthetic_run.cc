#include "testing/synthetic_run.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <vector>

#include "lockstep/compare/tensor_stats.h"
#include "lockstep/format/dump_writer.h"
#include "lockstep/format/tensor.h"
#include "lockstep/numerics/half.h"

namespace lockstep::testing {
namespace {

const char* const kApis[] = {"linear", "relu", "gelu", "layer_norm", "softmax"};

Tensor MakeTensor(const std::vector<float>& v, DType dtype,
                  std::vector<int64_t> shape) {
  std::string bytes;
  if (dtype == DType::kFloat32) {
    bytes.assign(reinterpret_cast<const char*>(v.data()), v.size() * 4);
  } else {
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      h[i] =
          dtype == DType::kFloat16 ? FloatToHalf(v[i]) : FloatToBFloat16(v[i]);
    }
    bytes.assign(reinterpret_cast<const char*>(h.data()), h.size() * 2);
  }
  return Tensor::FromBytes(dtype, std::move(shape), std::move(bytes));
}

PyValue Num(double d) { return PyValue::Float(d); }

StatusOr<PyValue> Leaf(DumpWriter* w, const std::string& stem, const Tensor& t,
                       bool save) {
  TensorStats s = ComputeTensorStats(t, 1);
  std::vector<PyValue> shape;
  for (int64_t d : t.shape()) shape.push_back(PyValue::Int(d));
  bool bad = s.nan > 0;
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf_max = s.pos_inf > 0 ? INFINITY : s.max;
  std::vector<std::pair<std::string, PyValue>> f = {
      {"type", PyValue::Str("torch.Tensor")},
      {"dtype", PyValue::Str(std::string(TorchDTypeName(t.dtype())))},
      {"shape", PyValue::List(std::move(shape))},
      {"Max", Num(bad ? nan : inf_max)},
      {"Min", Num(bad ? nan : (s.neg_inf > 0 ? -INFINITY : s.min))},
      {"Mean", Num(bad || s.finite < s.n ? nan : Mean(s))},
      {"Norm", Num(bad || s.finite < s.n ? nan : L2Norm(s))},
      {"requires_grad", PyValue::Bool(false)}};
  if (save) {
    LOCKSTEP_ASSIGN_OR_RETURN(std::string name, w->SaveTensor(stem, t));
    f.emplace_back("data_name", PyValue::Str(name));
  }
  return PyValue::Dict(std::move(f));
}

void ApplyFault(const SyntheticRun& run, std::vector<float>* v,
                std::vector<int64_t>* shape) {
  switch (run.fault) {
    case Fault::kPrecision:
      for (float& x : *v) x = static_cast<float>(x * (1 + run.rel));
      break;
    case Fault::kNan:
      (*v)[v->size() / 2] = std::numeric_limits<float>::quiet_NaN();
      break;
    case Fault::kInf:
      (*v)[v->size() / 3] = std::numeric_limits<float>::infinity();
      break;
    case Fault::kShape:
      v->pop_back();
      *shape = {static_cast<int64_t>(v->size())};
      break;
    default:
      break;
  }
}

}  // namespace

std::string SyntheticOpName(int k) {
  int api = k % 5;
  return std::string("Functional.") + kApis[api] + "." + std::to_string(k / 5) +
         ".forward";
}

Status WriteSyntheticRun(const SyntheticRun& run, const std::string& rank_dir) {
  DumpWriterOptions o;
  o.task = run.task;
  o.level = "L1";
  o.pack_tensors = run.packed;
  LOCKSTEP_ASSIGN_OR_RETURN(std::unique_ptr<DumpWriter> w,
                            DumpWriter::Create(rank_dir, o));
  std::mt19937_64 rng(run.seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> x(static_cast<size_t>(run.elements));
  for (float& v : x) v = normal(rng);
  std::vector<int64_t> shape = {run.elements};
  bool save = run.task == "tensor";
  auto emit = [&](const std::string& name, const std::vector<float>& in_v,
                  const std::vector<int64_t>& in_s,
                  const std::vector<float>& out_v,
                  const std::vector<int64_t>& out_s) -> Status {
    LOCKSTEP_ASSIGN_OR_RETURN(PyValue in,
                              Leaf(w.get(), name + ".input.0",
                                   MakeTensor(in_v, run.dtype, in_s), save));
    LOCKSTEP_ASSIGN_OR_RETURN(PyValue out,
                              Leaf(w.get(), name + ".output.0",
                                   MakeTensor(out_v, run.dtype, out_s), save));
    w->AddEntry(name, PyValue::Dict({{"input_args", PyValue::List({in})},
                                     {"input_kwargs", PyValue::Dict({})},
                                     {"output", PyValue::List({out})}}));
    return Status::Ok();
  };
  for (int k = 0; k < run.ops; ++k) {
    bool at_fault = k == run.fault_op;
    if (at_fault && run.fault == Fault::kInserted) {
      // An extra op (e.g. a scripted function) that leaves the data as it is.
      LOCKSTEP_RETURN_IF_ERROR(
          emit("Torch.jit_fn.0.forward", x, shape, x, shape));
    }
    if (at_fault && run.fault == Fault::kMissing) continue;
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      y[i] = std::tanh(x[i]) * 1.5f + 0.01f * static_cast<float>(k);
    }
    std::vector<int64_t> yshape = shape;
    if (at_fault) ApplyFault(run, &y, &yshape);
    LOCKSTEP_RETURN_IF_ERROR(emit(SyntheticOpName(k), x, shape, y, yshape));
    x = std::move(y);
    shape = yshape;
  }
  return w->Flush();
}

}  // namespace lockstep::testing
