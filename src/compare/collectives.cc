#include "lockstep/compare/collectives.h"

#include <algorithm>
#include <charconv>
#include <optional>

namespace lockstep {
namespace {

// A torch.distributed API: how its data flows, its parameters in order (as
// torch 2.x declares them), the one holding the data it sends, and the one
// naming the root or peer.
struct ApiSpec {
  const char* api;
  CollectiveFlow flow;
  std::vector<const char*> params;
  const char* data;  // "" when it sends nothing
  const char* root;  // "src" / "dst"; "" when none
};

const std::vector<ApiSpec>& Specs() {
  using F = CollectiveFlow;
  static const auto* specs = new std::vector<ApiSpec>{
      {"all_reduce",
       F::kAll,
       {"tensor", "op", "group", "async_op"},
       "tensor",
       ""},
      {"all_reduce_coalesced",
       F::kAll,
       {"tensors", "op", "group", "async_op"},
       "tensors",
       ""},
      {"broadcast",
       F::kFromRoot,
       {"tensor", "src", "group", "async_op", "group_src"},
       "tensor",
       "src"},
      {"broadcast_object_list",
       F::kFromRoot,
       {"object_list", "src", "group", "device", "group_src"},
       "object_list",
       "src"},
      {"all_gather",
       F::kAll,
       {"tensor_list", "tensor", "group", "async_op"},
       "tensor",
       ""},
      {"all_gather_into_tensor",
       F::kAll,
       {"output_tensor", "input_tensor", "group", "async_op"},
       "input_tensor",
       ""},
      {"_all_gather_base",
       F::kAll,
       {"output_tensor", "input_tensor", "group", "async_op"},
       "input_tensor",
       ""},
      {"all_gather_object",
       F::kAll,
       {"object_list", "obj", "group"},
       "obj",
       ""},
      {"reduce_scatter",
       F::kAll,
       {"output", "input_list", "op", "group", "async_op"},
       "input_list",
       ""},
      {"reduce_scatter_tensor",
       F::kAll,
       {"output", "input", "op", "group", "async_op"},
       "input",
       ""},
      {"_reduce_scatter_base",
       F::kAll,
       {"output", "input", "op", "group", "async_op"},
       "input",
       ""},
      {"all_to_all",
       F::kAll,
       {"output_tensor_list", "input_tensor_list", "group", "async_op"},
       "input_tensor_list",
       ""},
      {"all_to_all_single",
       F::kAll,
       {"output", "input", "output_split_sizes", "input_split_sizes", "group",
        "async_op"},
       "input",
       ""},
      {"send",
       F::kSend,
       {"tensor", "dst", "group", "tag", "group_dst"},
       "tensor",
       "dst"},
      {"isend",
       F::kSend,
       {"tensor", "dst", "group", "tag", "group_dst"},
       "tensor",
       "dst"},
      {"send_object_list",
       F::kSend,
       {"object_list", "dst", "group", "device", "group_dst"},
       "object_list",
       "dst"},
      {"recv",
       F::kRecv,
       {"tensor", "src", "group", "tag", "group_src"},
       "",
       "src"},
      {"irecv",
       F::kRecv,
       {"tensor", "src", "group", "tag", "group_src"},
       "",
       "src"},
      {"recv_object_list",
       F::kRecv,
       {"object_list", "src", "group", "device", "group_src"},
       "",
       "src"},
      {"reduce",
       F::kToRoot,
       {"tensor", "dst", "op", "group", "async_op", "group_dst"},
       "tensor",
       "dst"},
      {"scatter",
       F::kFromRoot,
       {"tensor", "scatter_list", "src", "group", "async_op", "group_src"},
       "scatter_list",
       "src"},
      {"gather",
       F::kToRoot,
       {"tensor", "gather_list", "dst", "group", "async_op", "group_dst"},
       "tensor",
       "dst"},
      {"barrier", F::kNone, {"group", "async_op", "device_ids"}, "", ""},
      {"monitored_barrier",
       F::kNone,
       {"group", "timeout", "wait_all_ranks"},
       "",
       ""},
  };
  return *specs;
}

// "Distributed.all_reduce.0.forward" -> "all_reduce"; "" when the entry is
// not a forward entry of a Distributed prefix.
std::string_view DistributedApi(std::string_view entry) {
  for (std::string_view prefix : {"Distributed.", "MintDistributed."}) {
    if (!entry.starts_with(prefix)) continue;
    std::string_view rest = entry.substr(prefix.size());
    if (!rest.ends_with(".forward")) return "";
    rest.remove_suffix(8);
    size_t dot = rest.rfind('.');
    return dot == std::string_view::npos ? "" : rest.substr(0, dot);
  }
  return "";
}

const ApiSpec* SpecOf(std::string_view entry) {
  std::string_view api = DistributedApi(entry);
  if (api.empty()) return nullptr;
  for (const ApiSpec& s : Specs())
    if (api == s.api) return &s;
  return nullptr;
}

// The argument a row of `entry` belongs to, as a parameter name, and what
// follows it ("tensor", ".0"); empty when the row is not an input.
struct ArgRef {
  std::string name;
  std::string_view sub;
};

ArgRef ArgOf(const ApiSpec& spec, std::string_view entry,
             std::string_view row) {
  if (!row.starts_with(entry)) return {};
  std::string_view rest = row.substr(entry.size());
  for (std::string_view io : {".input.", ".kwargs."}) {
    if (!rest.starts_with(io)) continue;
    rest.remove_prefix(io.size());
    size_t dot = rest.find('.');
    std::string_view key = rest.substr(0, dot);
    std::string_view sub =
        dot == std::string_view::npos ? "" : rest.substr(dot);
    size_t pos = 0;
    auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), pos);
    if (ec == std::errc() && end == key.data() + key.size()) {
      if (pos >= spec.params.size()) return {std::string(key), sub};
      return {spec.params[pos], sub};
    }
    return {std::string(key), sub};
  }
  return {};
}

// A rank number from a row's value: an int, or a str of digits (src and dst
// keyword rows hold str(value)).
std::optional<int64_t> RankValue(const OpRow& r) {
  const PyValue& v = r.stats[0];
  if (v.kind() == PyValue::Kind::kInt && v.as_int() >= 0) return v.as_int();
  if (v.kind() != PyValue::Kind::kStr) return std::nullopt;
  const std::string& s = v.as_str();
  int64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < 0)
    return std::nullopt;
  return n;
}

// "[0, 1, 2]" (Python's str of a list of ints) -> {0, 1, 2}.
std::optional<std::vector<int64_t>> ParseRankList(std::string_view s) {
  if (s.size() < 2 || s.front() != '[' || s.back() != ']') return std::nullopt;
  s = s.substr(1, s.size() - 2);
  std::vector<int64_t> out;
  while (!s.empty()) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    int64_t n = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc() || n < 0) return std::nullopt;
    out.push_back(n);
    s.remove_prefix(static_cast<size_t>(end - s.data()));
    if (s.empty()) break;
    if (s.front() != ',') return std::nullopt;
    s.remove_prefix(1);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

std::string RankListKey(const std::vector<int64_t>& ranks) {
  std::string out = "[";
  for (size_t i = 0; i < ranks.size(); ++i)
    out += (i ? ", " : "") + std::to_string(ranks[i]);
  return out + "]";
}

// What one call's input rows say, gathered before it is resolved.
struct CallArgs {
  bool group_given = false, group_bad = false;
  std::optional<std::vector<int64_t>> members;
  std::string group_name;       // a named (MindSpore) group
  std::vector<int64_t> listed;  // a Python list of ranks, element by element
  std::optional<int64_t> root, group_root;
  bool root_bad = false;
  bool async = false;  // async_op=True: msprobe dumps it at wait()
};

void ReadGroupRow(const OpRow& r, std::string_view sub, CallArgs* a) {
  a->group_given = true;
  if (!sub.empty()) {  // an element of a list of ranks
    std::optional<int64_t> n = RankValue(r);
    if (n && !r.is_tensor) {
      a->listed.push_back(*n);
    } else {
      a->group_bad = true;
    }
  } else if (r.is_null) {
    a->group_given = false;  // the default group
  } else if (r.dtype == "torch.ProcessGroup" ||
             r.dtype == "mindspore.ProcessGroup") {
    a->members = ParseRankList(r.stats[0].as_str());
    a->group_bad = !a->members;
  } else if (r.stats[0].kind() == PyValue::Kind::kStr && !r.is_tensor &&
             !r.stats[0].as_str().empty()) {
    a->group_name = r.stats[0].as_str();
  } else {
    a->group_bad = true;
  }
}

CallArgs ReadArgs(const ApiSpec& spec, const std::vector<OpRow>& rows,
                  size_t begin, size_t end) {
  CallArgs a;
  std::string_view root = spec.root;
  std::string group_root = std::string("group_") + spec.root;
  for (size_t i = begin; i < end; ++i) {
    const OpRow& r = rows[i];
    if (r.state != RowState::kInput) continue;
    ArgRef arg = ArgOf(spec, r.entry, r.name);
    if (arg.name == "group") {
      ReadGroupRow(r, arg.sub, &a);
    } else if (arg.name == "async_op") {
      a.async = r.stats[0].as_bool() || (r.stats[0].as_str() == "True");
    } else if (!root.empty() && (arg.name == root || arg.name == group_root) &&
               arg.sub.empty() && !r.is_null) {
      std::optional<int64_t> n = RankValue(r);
      bool none = r.stats[0].kind() == PyValue::Kind::kStr &&
                  r.stats[0].as_str() == "None";
      if (!n && !none) a.root_bad = true;
      (arg.name == root ? a.root : a.group_root) = n;
    }
  }
  if (!a.listed.empty() && !a.group_bad) a.members = a.listed;
  return a;
}

CollectiveCall Resolve(const ApiSpec& spec, std::string_view entry,
                       const CallArgs& a, int64_t rank,
                       std::vector<std::string>* problems) {
  CollectiveCall c;
  c.entry = std::string(entry);
  c.api = spec.api;
  c.flow = spec.flow;
  // An async call's inputs are dumped after its wait(), when they hold the
  // result: no input is the data it sent.
  c.data_kw = a.async ? "" : spec.data;
  for (size_t k = 0; k < spec.params.size() && !c.data_kw.empty(); ++k)
    if (c.data_kw == spec.params[k]) c.data_arg = static_cast<int>(k);
  auto problem = [&](const std::string& what) {
    problems->push_back(c.entry + ": " + what);
  };
  if (a.group_bad) {
    c.group = "unknown";
    problem(
        "its group is neither null, a ProcessGroup with group_ranks, a list "
        "of ranks nor a group name; linked with the calls of the other ranks "
        "whose group is unknown");
  } else if (a.members) {
    std::vector<int64_t> m = *a.members;
    c.group = RankListKey(m);
    if (std::find(m.begin(), m.end(), rank) == m.end())
      problem("rank " + std::to_string(rank) + " is not in its group " +
              c.group);
  } else if (!a.group_name.empty()) {
    c.group = a.group_name;
  }
  std::optional<int64_t> root = a.root;
  if (!root && a.group_root) {  // group_src / group_dst: a group index
    if (a.members && *a.group_root < static_cast<int64_t>(a.members->size())) {
      root = (*a.members)[static_cast<size_t>(*a.group_root)];
    } else {
      problem("its group_" + std::string(spec.root) +
              " does not index a known group");
    }
  }
  if (a.root_bad) problem(std::string(spec.root) + " is not a rank");
  bool p2p =
      spec.flow == CollectiveFlow::kSend || spec.flow == CollectiveFlow::kRecv;
  (p2p ? c.peer : c.root) = root.value_or(-1);
  return c;
}

}  // namespace

bool IsCollectiveEntry(std::string_view entry) {
  return SpecOf(entry) != nullptr;
}

std::vector<CollectiveCall> ReadCollectives(
    const std::vector<OpRow>& rows, int64_t rank,
    std::vector<std::string>* problems) {
  std::vector<CollectiveCall> calls;
  for (size_t i = 0; i < rows.size();) {
    size_t end = i + 1;
    while (end < rows.size() && rows[end].entry == rows[i].entry) ++end;
    if (const ApiSpec* spec = SpecOf(rows[i].entry)) {
      CallArgs a = ReadArgs(*spec, rows, i, end);
      calls.push_back(Resolve(*spec, rows[i].entry, a, rank, problems));
    }
    i = end;
  }
  return calls;
}

bool IsCollectiveDataInput(const CollectiveCall& call, int64_t rank,
                           std::string_view row_name) {
  if (call.data_kw.empty()) return false;
  if (call.flow == CollectiveFlow::kFromRoot && call.root >= 0 &&
      call.root != rank) {
    return false;
  }
  const ApiSpec* spec = SpecOf(call.entry);
  return spec != nullptr &&
         ArgOf(*spec, call.entry, row_name).name == call.data_kw;
}

}  // namespace lockstep
