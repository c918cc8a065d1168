// What the first-divergence walk (first_divergence.cc) reads from entry
// names and rows: argument names of common APIs, in-place calls, ops whose
// error no input bound limits, two sides' statistics compared and hashed,
// and the words its details are made of.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "compare/first_divergence_internal.h"
#include "lockstep/format/api_naming.h"

namespace lockstep::divergence_detail {
namespace {

// Parameter names of common APIs, for "argument `eps`" instead of
// "argument 4" (positional arguments as the probes record them; a Tensor
// method's argument 0 is self). Where the Python signature and the ATen
// schema that lockstep's probe records disagree, a position holds the
// ATen name when the Python one is never passed by position in practice:
// cross_entropy_loss(self, target, weight, reduction, ignore_index,
// label_smoothing) against Python's deprecated size_average and reduce at
// 3 and 5; softmax(self, dim, dtype) against Python's internal _stacklevel
// at 2.
const std::map<std::string, std::vector<const char*>>& ArgNames() {
  static const auto* names =
      new std::map<std::string, std::vector<const char*>>{
          {"Functional.gelu", {"input", "approximate"}},
          {"Functional.layer_norm",
           {"input", "normalized_shape", "weight", "bias", "eps"}},
          {"Functional.group_norm",
           {"input", "num_groups", "weight", "bias", "eps"}},
          {"Functional.batch_norm",
           {"input", "running_mean", "running_var", "weight", "bias",
            "training", "momentum", "eps"}},
          {"Functional.dropout", {"input", "p", "training", "inplace"}},
          {"Functional.softmax", {"input", "dim", "dtype", "dtype"}},
          {"Functional.log_softmax", {"input", "dim", "dtype", "dtype"}},
          {"Functional.linear", {"input", "weight", "bias"}},
          {"Functional.conv2d",
           {"input", "weight", "bias", "stride", "padding", "dilation",
            "groups"}},
          {"Functional.embedding",
           {"input", "weight", "padding_idx", "max_norm", "norm_type",
            "scale_grad_by_freq", "sparse"}},
          {"Functional.cross_entropy",
           {"input", "target", "weight", "reduction", "ignore_index",
            "label_smoothing", "reduction", "label_smoothing"}},
          {"Tensor.masked_fill", {"self", "mask", "value"}},
          {"Tensor.masked_fill_", {"self", "mask", "value"}},
          {"Torch.masked_fill", {"input", "mask", "value"}},
          {"Functional.leaky_relu", {"input", "negative_slope", "inplace"}},
          {"Functional.relu", {"input", "inplace"}},
          {"Functional.max_pool2d",
           {"input", "kernel_size", "stride", "padding", "dilation",
            "ceil_mode", "return_indices"}},
          {"Functional.scaled_dot_product_attention",
           {"query", "key", "value", "attn_mask", "dropout_p", "is_causal",
            "scale"}},
      };
  return *names;
}

}  // namespace

std::string Fmt(double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.3g", x);
  return buf;
}

std::string ArgumentName(const CompareRow& r) {
  const std::string name(r.npu_name());
  size_t at = name.find(".input.", r.entry.size() > 0 ? r.entry.size() - 1 : 0);
  if (at == std::string::npos) return "argument " + name;
  std::string arg = name.substr(at + 7);
  std::string first = arg.substr(0, arg.find('.'));
  bool positional = !first.empty() &&
                    std::all_of(first.begin(), first.end(),
                                [](char c) { return c >= '0' && c <= '9'; });
  if (positional) {
    // "Functional.gelu.0.forward" -> "Functional.gelu"
    std::string api = r.entry;
    for (int i = 0; i < 2 && api.rfind('.') != std::string::npos; ++i)
      api.erase(api.rfind('.'));
    auto it = ArgNames().find(api);
    size_t k = std::stoul(first);
    if (it != ArgNames().end() && k < it->second.size()) {
      return "argument `" + std::string(it->second[k]) + "`" +
             arg.substr(first.size());
    }
    return "argument " + arg;
  }
  return "argument `" + arg + "`";
}

bool InPlace(std::string_view entry) {
  std::string_view api = EntryApi(entry);
  if (api.size() > 4 && api.starts_with("__i") && api.ends_with("__"))
    return true;
  return api.size() > 1 && api.ends_with('_') && !api.ends_with("__");
}

bool UnboundedAmplifier(const std::string& entry) {
  static const auto* ops = new std::set<std::string, std::less<>>{
      "div",          "div_",         "true_divide",   "true_divide_",
      "__truediv__",  "__rtruediv__", "__div__",       "__rdiv__",
      "__itruediv__", "addcdiv",      "addcdiv_",      "reciprocal",
      "reciprocal_",  "rsqrt",        "rsqrt_",        "log",
      "log_",         "pow",          "pow_",          "__pow__",
      "__rpow__",     "_foreach_div", "_foreach_div_", "_foreach_addcdiv_",
      "sum",          "mean",         "nansum",        "nanmean",
      "var",          "std",          "var_mean",      "std_mean",
      "cumsum",       "cumsum_"};
  return ops->count(EntryApi(entry)) > 0;
}

std::string ForwardOf(const std::string& entry) {
  size_t at = entry.rfind(".backward");
  if (at == std::string::npos) return "";
  return entry.substr(0, at) + ".forward" + entry.substr(at + 9);
}

bool SameStats(const std::array<double, 4>& a, const std::array<double, 4>& b) {
  auto eq = [](double x, double y) {
    return x == y || (std::isnan(x) && std::isnan(y));
  };
  auto near = [&](double x, double y) {
    return eq(x, y) ||
           std::fabs(x - y) <= 1e-6 * std::max(std::fabs(x), std::fabs(y));
  };
  return eq(a[0], b[0]) && eq(a[1], b[1]) && near(a[2], b[2]) &&
         near(a[3], b[3]);
}

uint64_t StatsKey(const std::array<double, 4>& s) {
  uint64_t x, y;
  std::memcpy(&x, &s[0], 8);
  std::memcpy(&y, &s[1], 8);
  return x * 0x9E3779B97F4A7C15ull ^ (y + (x << 6) + (x >> 2));
}

bool DiffersAtAll(const CompareRow& r) {
  if (!r.is_tensor || !(r.error > 0)) return false;
  if (Known(r.cosine)) return true;
  return !SameStats(r.target_stats, r.baseline_stats);
}

std::string_view DtypeMessage(const CompareRow& r) {
  for (const std::string& m : r.messages) {
    if (m.rfind("dtype ", 0) == 0) return m;
  }
  return {};
}

std::string InputName(const CompareRow& r) {
  std::string_view name = r.npu_name();
  size_t at = name.rfind(".input.");
  if (at != std::string::npos) return std::string(name.substr(at + 7));
  at = name.rfind(".parameters.");
  return at != std::string::npos
             ? "parameter " + std::string(name.substr(at + 12))
             : std::string(name);
}

std::string OneValueEach(const CompareRow& r) {
  const auto& t = r.target_stats;
  const auto& b = r.baseline_stats;
  if (!r.is_tensor || !(t[0] == t[1]) || !(b[0] == b[1])) return "";
  return " (" + Fmt(t[0]) + " vs " + Fmt(b[0]) + ")";
}

std::string TargetVsBaseline(const CompareRow& r) {
  for (const auto& m : r.messages) {
    if (m.rfind("value ", 0) == 0) return m.substr(6);
  }
  return "error " + Fmt(r.error);
}

std::string JoinMessages(const CompareRow& r) {
  std::string out;
  for (const auto& m : r.messages) out += (out.empty() ? "" : "; ") + m;
  return out;
}

}  // namespace lockstep::divergence_detail
