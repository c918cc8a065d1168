// Dropout off, reversibly: set the probability p of every dropout module in
// a torch::nn::Module tree to 0, and put the old values back later.
//
// Dropout variants handled (LibTorch's C++ modules; all keep their p in
// `options`, read at every forward call): Dropout, Dropout2d, Dropout3d,
// AlphaDropout, FeatureAlphaDropout. Other modules are untouched, including
// those that call torch::nn::functional::dropout in their own forward (no
// module holds their p; pass 0 to them yourself). With p = 0 every variant
// returns its input unchanged in training mode too, and draws no random
// numbers, so the rest of the run is independent of dropout.
//
// Thread safety: not thread-safe; call while no forward pass is running.
#ifndef LOCKSTEP_TORCH_DROPOUT_H_
#define LOCKSTEP_TORCH_DROPOUT_H_

#include <memory>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace lockstep {

// One dropout module found in the tree.
struct DropoutSite {
  std::string name;  // its path in the tree ("" for the root), e.g. "drop1"
  std::string kind;  // "Dropout", "Dropout2d", "Dropout3d", "AlphaDropout",
                     // "FeatureAlphaDropout"
  double p = 0;      // p before DropoutOff
};

// What DropoutOff changed; Restore() puts the old p values back. Keeps the
// submodules alive (shared ownership); the root is referenced, not owned.
class DropoutOffRecord {
 public:
  DropoutOffRecord() = default;
  DropoutOffRecord(DropoutOffRecord&&) = default;
  DropoutOffRecord& operator=(DropoutOffRecord&&) = default;

  // The dropout modules, in the tree's depth-first order.
  const std::vector<DropoutSite>& sites() const { return sites_; }

  // Sets every recorded module's p back to its value before DropoutOff.
  // Idempotent. Does nothing to modules added to the tree since.
  // REQUIRES: the root given to DropoutOff is alive.
  void Restore();

 private:
  friend DropoutOffRecord DropoutOff(torch::nn::Module& root);
  std::vector<DropoutSite> sites_;
  std::vector<torch::nn::Module*> modules_;  // parallel to sites_
  std::vector<std::shared_ptr<torch::nn::Module>> owned_;
};

// Sets p = 0 on every dropout module in `root`'s tree (root included) and
// returns what it changed. The record does not restore on destruction:
// dropping it keeps dropout off for the rest of the run.
DropoutOffRecord DropoutOff(torch::nn::Module& root);

}  // namespace lockstep

#endif  // LOCKSTEP_TORCH_DROPOUT_H_
