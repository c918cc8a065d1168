// torch.distributed collectives in the probe's dump, as msprobe records them
// (compare/collectives.h reads them): `Distributed.<function>.<n>.forward`
// with input_args / input_kwargs as the Python call makes them
// (dist.all_reduce(tensor, op=..., group=...)), `group` as
// {"type": "torch.ProcessGroup", "group_ranks": [...], "group_id": CRC-32 of
// str(group_ranks)}, and `output` the arguments again once the work is done.
//
// The dispatcher runs them as c10d:: operators (PyTorch 1.13+), from
// Python's torch.distributed and from C++'s c10d::ops alike. Their schemas
// (1.13) and the Python function each stands for:
//   allreduce_(Tensor[], ProcessGroup, ReduceOp, int timeout)
//       all_reduce(tensor, op, group)
//   broadcast_(Tensor[], ProcessGroup, int root, int root_tensor, timeout)
//       broadcast(tensor, src, group)
//   allgather_(Tensor[][] out, Tensor[] in, ProcessGroup, timeout)
//       all_gather(tensor_list, tensor, group)
//   _allgather_base_(Tensor out, Tensor in, ProcessGroup)
//       all_gather_into_tensor(output, input, group)
//   reduce_scatter_(Tensor[] out, Tensor[][] in, ProcessGroup, ReduceOp, ...)
//       reduce_scatter(output, input_list, op, group)
//   reduce_(Tensor[], ProcessGroup, ReduceOp, int root, ...)
//       reduce(tensor, dst, op, group)
//   gather_(Tensor[][] out, Tensor[] in, ProcessGroup, int root, ...)
//       gather(tensor, gather_list, dst, group)
//   scatter_(Tensor[] out, Tensor[][] in, ProcessGroup, int root, ...)
//       scatter(tensor, scatter_list, src, group)
//   alltoall_(Tensor[] out, Tensor[] in, ProcessGroup, ...)
//       all_to_all(output_tensor_list, input_tensor_list, group)
//   barrier(ProcessGroup, int[] device_ids, timeout)      barrier(group)
//   send(Tensor[], ProcessGroup, int dst, int tag)        send(tensor, dst,
//   group, tag) recv_(Tensor[], ProcessGroup, int src, int tag) recv(tensor,
//   src, group, tag)
// A C++ ProcessGroup does not know the global ranks of a subgroup: group_ranks
// is 0..size-1, the global ranks for the default group (the one a C++
// training usually has).
#include <cstdio>
#include <map>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <tuple>

#include "lockstep/format/crc32.h"
#include "torch/probe_impl.h"

namespace lockstep {
namespace {

// The c10d operator's name without namespace and overload.
std::string_view C10dOp(const at::RecordFunction& fn) {
  std::string_view n = fn.name();
  if (n.starts_with("c10d::")) n.remove_prefix(6);
  return n.substr(0, n.find('.'));
}

const char* ReduceOpName(const c10::IValue& v) {
  if (!v.isObject()) return "RedOpType.UNKNOWN";
  try {
    switch (v.toCustomClass<c10d::ReduceOp>()->op_) {
      case c10d::ReduceOp::SUM:
        return "RedOpType.SUM";
      case c10d::ReduceOp::AVG:
        return "RedOpType.AVG";
      case c10d::ReduceOp::PRODUCT:
        return "RedOpType.PRODUCT";
      case c10d::ReduceOp::MIN:
        return "RedOpType.MIN";
      case c10d::ReduceOp::MAX:
        return "RedOpType.MAX";
      default:
        return "RedOpType.OTHER";
    }
  } catch (const std::exception&) {
    return "RedOpType.UNKNOWN";
  }
}

// {"type": "torch.ProcessGroup", "group_ranks": [0, ..], "group_id": ..}.
void WriteGroup(const c10::IValue& pg, PyJsonBuilder* b) {
  int64_t size = -1;
  if (pg.isObject()) {
    try {
      size = pg.toCustomClass<c10d::ProcessGroup>()->getSize();
    } catch (const std::exception&) {
    }
  }
  if (size < 0) {
    b->Null();
    return;
  }
  std::string repr = "[";
  b->BeginDict().Key("type").Str("torch.ProcessGroup").Key("group_ranks");
  b->BeginList();
  for (int64_t r = 0; r < size; ++r) {
    b->Int(r);
    if (r) repr += ", ";
    repr += std::to_string(r);
  }
  b->EndList();
  repr += "]";
  char id[16];
  std::snprintf(id, sizeof id, "%08x", Crc32(repr));
  b->Key("group_id").Str(id).EndDict();
}

// The Python call's arguments: positional values (from the c10d inputs,
// by index) and keywords (an int input by index, the group, the op).
struct PySignature {
  std::vector<int> args;  // input index per positional argument
  // (keyword, input index, what): what 'i' int, 'g' group, 'o' reduce op.
  std::vector<std::tuple<const char*, int, char>> kwargs;
};

const PySignature* SignatureOf(std::string_view op) {
  static const std::map<std::string_view, PySignature> kSigs = {
      {"allreduce_", {{0}, {{"op", 2, 'o'}, {"group", 1, 'g'}}}},
      {"broadcast_", {{0}, {{"src", 2, 'i'}, {"group", 1, 'g'}}}},
      {"allgather_", {{0, 1}, {{"group", 2, 'g'}}}},
      {"_allgather_base_", {{0, 1}, {{"group", 2, 'g'}}}},
      {"reduce_scatter_", {{0, 1}, {{"op", 3, 'o'}, {"group", 2, 'g'}}}},
      {"_reduce_scatter_base_", {{0, 1}, {{"op", 3, 'o'}, {"group", 2, 'g'}}}},
      {"reduce_", {{0}, {{"dst", 3, 'i'}, {"op", 2, 'o'}, {"group", 1, 'g'}}}},
      {"gather_", {{1, 0}, {{"dst", 3, 'i'}, {"group", 2, 'g'}}}},
      {"scatter_", {{0, 1}, {{"src", 3, 'i'}, {"group", 2, 'g'}}}},
      {"alltoall_", {{0, 1}, {{"group", 2, 'g'}}}},
      {"barrier", {{}, {{"group", 0, 'g'}}}},
      {"send", {{0}, {{"dst", 2, 'i'}, {"group", 1, 'g'}, {"tag", 3, 'i'}}}},
      {"recv_", {{0}, {{"src", 2, 'i'}, {"group", 1, 'g'}, {"tag", 3, 'i'}}}},
  };
  auto it = kSigs.find(op);
  return it == kSigs.end() ? nullptr : &it->second;
}

// A Tensor[] of one tensor is the Python call's single tensor; a Tensor[][]
// of one list its tensor list.
c10::IValue AsPython(const c10::IValue& v) {
  if (v.isTensorList()) {
    c10::List<at::Tensor> l = v.toTensorList();
    if (l.size() == 1) return l.get(0);
    return v;
  }
  if (v.isList()) {
    c10::List<c10::IValue> l = v.toList();
    if (l.size() == 1 && l.get(0).isTensorList()) return l.get(0);
  }
  return v;
}

// The Python call's positional arguments (input_args; `output` again).
std::vector<c10::IValue> PythonArgs(const PySignature* sig,
                                    c10::ArrayRef<const c10::IValue> in) {
  std::vector<c10::IValue> args;
  if (sig == nullptr) return args;
  for (int i : sig->args) {
    if (i < static_cast<int>(in.size())) args.push_back(AsPython(in[i]));
  }
  return args;
}

}  // namespace

void ProbeImpl::CollectiveInputs(const at::RecordFunction& fn, OpContext* ctx) {
  c10::ArrayRef<const c10::IValue> in = fn.inputs();
  const PySignature* sig = SignatureOf(C10dOp(fn));
  PyJsonBuilder& e = ctx->entry;
  e.BeginDict().Key("input_args");
  std::vector<c10::IValue> args = PythonArgs(sig, in);
  summarizer_.List(args, ctx->fwd + ".input", &e);
  // Held for the output: at the end callback torch 2.x's inputs() views
  // the stack that the results have replaced.
  ctx->held = args;
  e.Key("input_kwargs").BeginDict();
  if (sig != nullptr) {
    for (const auto& [key, i, what] : sig->kwargs) {
      if (i >= static_cast<int>(in.size())) continue;
      e.Key(key);
      if (what == 'g') {
        WriteGroup(in[i], &e);
      } else if (what == 'o') {
        e.BeginDict()
            .Key("type")
            .Str("torch.distributed.ReduceOp")
            .Key("value")
            .Str(ReduceOpName(in[i]))
            .EndDict();
      } else if (in[i].isInt()) {
        e.BeginDict().Key("type").Str("int").Key("value").Int(in[i].toInt());
        e.EndDict();
      } else {
        e.Null();
      }
    }
  }
  e.EndDict();
}

void ProbeImpl::CollectiveOutputs(OpContext* ctx) {
  // The tensors the call was given (CollectiveInputs), written in place.
  std::vector<c10::IValue> args = std::move(ctx->held);
  // The work wrote into the tensors from its own thread, without bumping
  // their version counters: statistics cached for them are stale.
  summarizer_.ClearCache();
  PyJsonBuilder& e = ctx->entry;
  e.Key("output");
  summarizer_.List(args, ctx->fwd + ".output", &e);
}

// Waits for the work a collective returned, so that what it wrote is there
// to record (msprobe records async calls after their wait() too). Outside
// the probe's lock: the work's thread may run operators.
void WaitForCollective(const at::RecordFunction& fn) {
  for (const c10::IValue& v : fn.outputs()) {
    std::vector<c10::IValue> items = {v};
    if (v.isTuple()) items = v.toTupleRef().elements().vec();
    for (const c10::IValue& item : items) {
      if (!item.isObject()) continue;
      try {
        item.toCustomClass<c10d::Work>()->wait();
      } catch (const std::exception&) {
        // The caller's own wait() reports it.
      }
    }
  }
}

}  // namespace lockstep
