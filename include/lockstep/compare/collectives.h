// Collective calls in a dump: msprobe's `Distributed.<api>.<n>.forward`
// entries (torch.distributed's all_reduce, broadcast, all_gather,
// all_gather_into_tensor, reduce_scatter(_tensor), all_to_all(_single),
// send/recv/isend/irecv, reduce, scatter, gather, barrier and their
// *_object_list forms), read from the rows of one rank's dump.
//
// How msprobe records them (its api_register.dist_module_forward and
// PytorchDataProcessor; docs/compare.md "Many ranks"):
//  - input_args and input_kwargs hold the arguments as the call was made,
//    positional or keyword; keyword rows are named "<entry>.input.<key>";
//  - `group` is null for the default group; a ProcessGroup is
//    {"type": "torch.ProcessGroup", "group_ranks": [global ranks],
//    "group_id": CRC-32 of str(group_ranks)} (without group_ranks when
//    msprobe could not get them), which flattening turns into a row whose
//    statistics are str(group_ranks); a Python list of ranks becomes one
//    {"type": "int"} leaf per rank (rows "<...>.group.<k>"); MindSpore
//    writes the group's name {"type": "str", "value": "tp-0-1"};
//  - src and dst are global ranks as {"type": "int"} leaves (group_src and
//    group_dst index into the group's ranks);
//  - `output` is the arguments again after the call (args, then kwargs
//    values): the tensors the collective wrote into;
//  - the inputs are taken before the call, except for a call made with
//    async_op=True (and isend/irecv), which msprobe dumps whole when its
//    work's wait() returns: then the inputs hold the result too, and such a
//    call has no data input here (recv and irecv have none anyway; isend's
//    tensor is unchanged by the call).
// Thread safety: pure functions.
#ifndef LOCKSTEP_COMPARE_COLLECTIVES_H_
#define LOCKSTEP_COMPARE_COLLECTIVES_H_

#include <string>
#include <string_view>
#include <vector>

#include "lockstep/compare/op_rows.h"
#include "lockstep/compare/result.h"

namespace lockstep {

// Whether `entry` is a collective this file knows ("Distributed.send.2.
// forward"; MindSpore's "MintDistributed." too). Backward entries and
// batch_isend_irecv (whose P2POp peers the rows do not keep) are not.
bool IsCollectiveEntry(std::string_view entry);

// The collective calls among `rows` (one rank's dump, flattened, in entry
// order) of rank `rank`. What cannot be read (a malformed group, a src that
// is not a rank, a rank outside its own group) is appended to `problems` as
// "<entry>: <what>" and the call is kept with group "unknown" or peer -1.
std::vector<CollectiveCall> ReadCollectives(const std::vector<OpRow>& rows,
                                            int64_t rank,
                                            std::vector<std::string>* problems);

// Whether the row named `row_name` (an input of `call` on `rank`) holds data
// the call sends: the data argument (for broadcast and scatter, on the root
// only). Other tensor inputs are receive buffers, whose contents before the
// call (often uninitialised) say nothing.
bool IsCollectiveDataInput(const CollectiveCall& call, int64_t rank,
                           std::string_view row_name);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_COLLECTIVES_H_
