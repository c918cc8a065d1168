#include "lockstep/format/api_naming.h"

#include <unordered_map>
#include <unordered_set>

namespace lockstep {
namespace {

// ATen operator -> torch.nn.functional name, where they differ or where
// the operator is what the functional call records.
const std::unordered_map<std::string_view, std::string_view>& FunctionalOps() {
  static const auto* kOps =
      new std::unordered_map<std::string_view, std::string_view>{
          {"linear", "linear"},
          {"bilinear", "bilinear"},
          {"conv1d", "conv1d"},
          {"conv2d", "conv2d"},
          {"conv3d", "conv3d"},
          {"conv_transpose1d", "conv_transpose1d"},
          {"conv_transpose2d", "conv_transpose2d"},
          {"conv_transpose3d", "conv_transpose3d"},
          {"relu", "relu"},
          {"relu6", "relu6"},
          {"leaky_relu", "leaky_relu"},
          {"gelu", "gelu"},
          {"silu", "silu"},
          {"mish", "mish"},
          {"elu", "elu"},
          {"selu", "selu"},
          {"celu", "celu"},
          {"hardtanh", "hardtanh"},
          {"hardswish", "hardswish"},
          {"hardsigmoid", "hardsigmoid"},
          {"softplus", "softplus"},
          {"threshold", "threshold"},
          {"glu", "glu"},
          {"softmax", "softmax"},
          {"_softmax", "softmax"},
          {"log_softmax", "log_softmax"},
          {"_log_softmax", "log_softmax"},
          {"dropout", "dropout"},
          {"feature_dropout", "dropout2d"},
          {"alpha_dropout", "alpha_dropout"},
          {"max_pool1d", "max_pool1d"},
          {"max_pool2d", "max_pool2d"},
          {"max_pool3d", "max_pool3d"},
          {"max_pool2d_with_indices", "max_pool2d"},
          {"avg_pool1d", "avg_pool1d"},
          {"avg_pool2d", "avg_pool2d"},
          {"avg_pool3d", "avg_pool3d"},
          {"adaptive_avg_pool1d", "adaptive_avg_pool1d"},
          {"adaptive_avg_pool2d", "adaptive_avg_pool2d"},
          {"adaptive_max_pool2d", "adaptive_max_pool2d"},
          {"batch_norm", "batch_norm"},
          {"layer_norm", "layer_norm"},
          {"group_norm", "group_norm"},
          {"instance_norm", "instance_norm"},
          {"embedding", "embedding"},
          {"pad", "pad"},
          {"constant_pad_nd", "pad"},
          {"upsample_nearest2d", "interpolate"},
          {"upsample_bilinear2d", "interpolate"},
          {"cross_entropy_loss", "cross_entropy"},
          {"nll_loss", "nll_loss"},
          {"nll_loss_nd", "nll_loss"},
          {"mse_loss", "mse_loss"},
          {"l1_loss", "l1_loss"},
          {"smooth_l1_loss", "smooth_l1_loss"},
          {"binary_cross_entropy", "binary_cross_entropy"},
          {"binary_cross_entropy_with_logits",
           "binary_cross_entropy_with_logits"},
          {"kl_div", "kl_div"},
          {"cosine_similarity", "cosine_similarity"},
          {"pairwise_distance", "pairwise_distance"},
          {"normalize", "normalize"},
          {"scaled_dot_product_attention", "scaled_dot_product_attention"},
      };
  return *kOps;
}

// Methods that torch.* does not have (msprobe records them as Tensor.*).
bool IsTensorOnly(std::string_view op) {
  static const auto* kOps = new std::unordered_set<std::string_view>{
      "view",       "view_as",  "t",        "contiguous",     "expand",
      "expand_as",  "type_as",  "repeat",   "float",          "half",
      "bfloat16",   "double",   "int",      "long",           "bool",
      "to",         "cpu",      "cuda",     "item",           "copy_",
      "fill_",      "zero_",    "uniform_", "normal_",        "masked_fill",
      "new_zeros",  "new_ones", "new_full", "new_empty",      "reshape_as",
      "index_put",  "__and__",  "__or__",   "__xor__",        "__lshift__",
      "__rshift__", "unfold",   "backward", "requires_grad_",
  };
  return kOps->count(op) > 0;
}

// Operators whose outputs are uninitialized memory: their statistics would
// differ from run to run, so they are not entries.
bool IsUninitialized(std::string_view op) {
  return op == "empty" || op == "empty_like" || op == "empty_strided" ||
         op == "new_empty" || op == "new_empty_strided" || op == "resize_";
}

}  // namespace

// torch.distributed's operators as the dispatcher runs them (c10d::,
// PyTorch 1.13+) and the torch.distributed function msprobe names them by.
static std::string_view CollectiveApi(std::string_view c10d_op) {
  static const std::unordered_map<std::string_view, std::string_view> kOps = {
      {"allreduce_", "all_reduce"},
      {"broadcast_", "broadcast"},
      {"allgather_", "all_gather"},
      {"_allgather_base_", "all_gather_into_tensor"},
      {"reduce_scatter_", "reduce_scatter"},
      {"_reduce_scatter_base_", "reduce_scatter_tensor"},
      {"reduce_", "reduce"},
      {"gather_", "gather"},
      {"scatter_", "scatter"},
      {"alltoall_", "all_to_all"},
      {"barrier", "barrier"},
      {"send", "send"},
      {"recv_", "recv"}};
  auto it = kOps.find(c10d_op);
  return it == kOps.end() ? std::string_view() : it->second;
}

std::string MsprobeApiName(std::string_view aten_name) {
  constexpr std::string_view kC10d = "c10d::";
  if (aten_name.starts_with(kC10d)) {
    std::string_view op = aten_name.substr(kC10d.size());
    std::string_view api = CollectiveApi(op.substr(0, op.find('.')));
    return api.empty() ? "" : "Distributed." + std::string(api);
  }
  constexpr std::string_view kNs = "aten::";
  if (aten_name.substr(0, kNs.size()) != kNs) return "";
  std::string_view op = aten_name.substr(kNs.size());
  op = op.substr(0, op.find('.'));  // drop an overload name
  if (op.empty() || IsUninitialized(op)) return "";
  const auto& functional = FunctionalOps();
  if (auto it = functional.find(op); it != functional.end()) {
    return "Functional." + std::string(it->second);
  }
  if (IsTensorOnly(op)) return "Tensor." + std::string(op);
  if (op.front() == '_') return "Aten." + std::string(op);
  // In-place variants (add_, mul_, ...) are Tensor methods.
  if (op.back() == '_') return "Tensor." + std::string(op);
  return "Torch." + std::string(op);
}

std::string_view EntryApi(std::string_view entry) {
  size_t a = entry.find('.');
  if (a == std::string_view::npos) return entry;
  size_t b = entry.find('.', a + 1);
  return entry.substr(a + 1, b == std::string_view::npos ? b : b - a - 1);
}

std::string ModuleClassName(std::string_view cpp_class) {
  // Drop template arguments ("Foo<int>") and namespaces ("torch::nn::").
  std::string_view c = cpp_class.substr(0, cpp_class.find('<'));
  if (size_t colon = c.rfind("::"); colon != std::string_view::npos) {
    c = c.substr(colon + 2);
  }
  constexpr std::string_view kImpl = "Impl";
  if (c.size() > kImpl.size() && c.substr(c.size() - kImpl.size()) == kImpl) {
    c = c.substr(0, c.size() - kImpl.size());
  }
  return std::string(c);
}

std::string MsprobeModuleName(std::string_view path,
                              std::string_view cpp_class) {
  std::string name = "Module.";
  if (!path.empty()) {
    name += path;
    name += '.';
  }
  return name + ModuleClassName(cpp_class);
}

}  // namespace lockstep
