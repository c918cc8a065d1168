// How the probe finds an operator call's own backward (probe_backward.cc).
//
// For a call y = f(x1..xn), f.N.backward holds the gradients with respect
// to the call's outputs ("input") and the gradients that flow from the call
// into each tensor input ("output"): the call's vector-Jacobian product, as
// msprobe's per-call hooks give it. The output's grad_fn alone is not that
// call: a composite operator (linear on a 3-D input, matmul, layer_norm)
// builds several autograd nodes and its output's node is an inner
// view/reshape; an operator may return its input (no node at all); an
// in-place operator on a view rewrites its base's history (CopySlices).
//
// So the probe notes, when a call begins, the autograd sequence number
// (every node built on this thread takes the next one) and the gradient
// edge of each tensor input. When it ends, the call's subgraph is the set of
// nodes reachable from its outputs' edges whose sequence number was taken
// during the call. Post-hooks on the outputs' nodes see the gradients of the
// outputs as the node receives them (after any tensor hook the user put on
// an output); post-hooks on the subgraph nodes whose edges leave the subgraph
// towards an input's edge see what the call passes to that input (summed
// when several nodes feed one input). An output whose edge is an input's
// edge (the call returned its input) gets the gradient arriving at that
// edge, and passes it on unchanged. Nothing in the graph is changed: the
// hooks return the gradients they are given.
#ifndef LOCKSTEP_SRC_TORCH_PROBE_BACKWARD_H_
#define LOCKSTEP_SRC_TORCH_PROBE_BACKWARD_H_

#include <ATen/TensorGeometry.h>
#include <ATen/core/ivalue.h>
#include <torch/csrc/autograd/edge.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace lockstep {

// A call's tensor inputs as it began.
struct CallInputs {
  uint64_t seq_begin = 0;  // at::sequence_number::peek() at the start
  // One per tensor input, in argument order, lists flattened; an invalid
  // edge where the input needs no gradient.
  std::vector<torch::autograd::Edge> edges;
  // The nesting of the backward entry's "output" list: per argument that
  // holds tensors, -1 for a tensor and n for a list of n tensors. Other
  // arguments (numbers, strings, None) have no place in it.
  std::vector<int> arg_shape;
  // Per tensor input: its base's gradient edge when it is a view (an
  // in-place call on it rewrites its base's history), else invalid.
  std::vector<torch::autograd::Edge> base_edges;
  // The first argument's geometry when it is a tensor: a view call's
  // source, for the chain of an in-place call on its output. Taken here, as
  // the call begins: at the end callback torch 2.x's RecordFunction inputs
  // view the stack that the results replaced.
  std::optional<at::TensorGeometry> first_input;
};

// Notes the inputs of a call that begins now. REQUIRES: grad mode on.
CallInputs NoteCallInputs(c10::ArrayRef<const c10::IValue> inputs);

// The output tensors of a call, lists flattened (undefined kept: their
// place in the entry's "input" list is null).
std::vector<at::Tensor> FlattenTensors(const std::vector<c10::IValue>& values);

}  // namespace lockstep

#endif  // LOCKSTEP_SRC_TORCH_PROBE_BACKWARD_H_
