// The operators lockstep replay runs: an allowlist of pure tensor operators
// (docs/replay.md#allowlist). A dump.json may name any operator of any
// namespace; only these run.
#include <array>
#include <string>
#include <string_view>

#include "torch/replay_internal.h"

namespace lockstep::replay {
namespace {

// Pure tensor operators on the allowlist that the bound table
// (replay_ops.cc) does not list: checked with the lenient "unlisted" bound,
// or not at all where their result is not a tensor.
constexpr std::array<std::string_view, 8> kPureUnbounded = {
    "item", "_local_scalar_dense", "size",     "numel",
    "dim",  "is_nonzero",          "linspace", "logspace"};

struct Denied {
  std::string_view name;
  const char* why;
};

constexpr const char* kFiles =
    "it reads or writes files (a dump.json must not reach the file system)";
constexpr const char* kRawView =
    "a raw view: it takes sizes, strides or an offset from its arguments "
    "instead of the input's, so crafted ones read past the tensor's memory";
constexpr const char* kStorage =
    "it changes a tensor's storage or metadata in place (not a function of "
    "its inputs)";

// Off the list in any case; named here for a precise reason.
constexpr std::array<Denied, 22> kDenied = {{
    {"from_file", kFiles},
    {"save", kFiles},
    {"load", kFiles},
    {"_save_for_mobile", kFiles},
    {"_load_for_mobile", kFiles},
    {"as_strided", kRawView},
    {"as_strided_scatter", kRawView},
    {"_reshape_alias", kRawView},
    {"_reshape_alias_copy", kRawView},
    {"as_strided_copy", kRawView},
    {"alias", kRawView},
    {"alias_copy", kRawView},
    {"_make_per_tensor_quantized_tensor", kRawView},
    {"_nested_view_from_buffer", kRawView},
    {"set", kStorage},
    {"resize", kStorage},
    {"resize_as", kStorage},
    {"_resize_output", kStorage},
    {"_set_storage_offset", kStorage},
    {"record_stream", kStorage},
    {"_copy_from", kStorage},
    {"_copy_from_and_resize", kStorage},
}};

// "aten::add_.Tensor" -> "add_"; the namespace in *ns.
std::string_view OperatorOf(std::string_view name, std::string_view* ns) {
  size_t colon = name.find("::");
  *ns = colon == std::string_view::npos ? "" : name.substr(0, colon);
  if (colon != std::string_view::npos) name.remove_prefix(colon + 2);
  return name.substr(0, name.find('.'));
}

}  // namespace

std::string OffAllowlistReason(std::string_view aten_name) {
  std::string_view ns;
  std::string_view op = OperatorOf(aten_name, &ns);
  std::string quoted = "'" + std::string(aten_name) + "'";
  if (ns != "aten") {
    return "not replayed: " + quoted +
           " is not an ATen operator (replay runs only pure ATen tensor "
           "operators: docs/replay.md#allowlist)";
  }
  std::string_view base = op;
  if (base.size() > 1 && base.back() == '_' && !base.starts_with("__")) {
    base.remove_suffix(1);  // in place: replay writes into its own copies
  }
  for (const Denied& d : kDenied) {
    if (base == d.name || op == d.name) {
      return "not replayed: " + quoted + " is " +
             (d.why == kRawView ? "" : "off the allowlist: ") + d.why;
    }
  }
  if (FindOpRule(aten_name) != nullptr) return "";
  for (std::string_view p : kPureUnbounded) {
    if (base == p) return "";
  }
  return "not replayed: " + quoted +
         " is not on replay's allowlist of pure tensor operators "
         "(docs/replay.md#allowlist)";
}

}  // namespace lockstep::replay
