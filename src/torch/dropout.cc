#include "lockstep/torch/dropout.h"

#include <torch/nn/modules/dropout.h>

#include <algorithm>
#include <utility>

namespace lockstep {
namespace {

// The options of `m` if it is a dropout variant, else nullptr; `kind` gets
// the variant's name.
template <typename Impl>
torch::nn::DropoutOptions* OptionsIf(torch::nn::Module* m, const char* name,
                                     std::string* kind) {
  auto* impl = dynamic_cast<Impl*>(m);
  if (impl == nullptr) return nullptr;
  *kind = name;
  return &impl->options;
}

torch::nn::DropoutOptions* DropoutOptionsOf(torch::nn::Module* m,
                                            std::string* kind) {
  using namespace torch::nn;  // NOLINT: the five Impl names below
  if (auto* o = OptionsIf<DropoutImpl>(m, "Dropout", kind)) return o;
  if (auto* o = OptionsIf<Dropout2dImpl>(m, "Dropout2d", kind)) return o;
  if (auto* o = OptionsIf<Dropout3dImpl>(m, "Dropout3d", kind)) return o;
  if (auto* o = OptionsIf<AlphaDropoutImpl>(m, "AlphaDropout", kind)) return o;
  return OptionsIf<FeatureAlphaDropoutImpl>(m, "FeatureAlphaDropout", kind);
}

}  // namespace

void DropoutOffRecord::Restore() {
  for (size_t i = 0; i < sites_.size(); ++i) {
    std::string kind;
    torch::nn::DropoutOptions* o = DropoutOptionsOf(modules_[i], &kind);
    if (o != nullptr) o->p(sites_[i].p);
  }
}

DropoutOffRecord DropoutOff(torch::nn::Module& root) {
  DropoutOffRecord r;
  // Returns whether `m` was recorded. A module shared by two parents is
  // recorded once, with its p before any change.
  auto visit = [&r](const std::string& name, torch::nn::Module* m) {
    std::string kind;
    torch::nn::DropoutOptions* o = DropoutOptionsOf(m, &kind);
    if (o == nullptr || std::count(r.modules_.begin(), r.modules_.end(), m)) {
      return false;
    }
    r.sites_.push_back(DropoutSite{name, kind, o->p()});
    r.modules_.push_back(m);
    o->p(0.0);
    return true;
  };
  visit("", &root);
  // include_self = false: the root need not be owned by a shared_ptr.
  for (const auto& item : root.named_modules("", /*include_self=*/false)) {
    if (visit(item.key(), item.value().get())) r.owned_.push_back(item.value());
  }
  return r;
}

}  // namespace lockstep
