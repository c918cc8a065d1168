#include "lockstep/compare/model_context.h"

#include <utility>
#include <vector>

#include "lockstep/format/dump_reader.h"

namespace lockstep {

int32_t ModuleTreeBuilder::NodeOf(std::string path, std::string cls) {
  auto [it, inserted] =
      index_.emplace(path, static_cast<int32_t>(result_->modules.size()));
  if (inserted) {
    result_->modules.push_back({std::move(path), std::move(cls), -1});
  } else if (result_->modules[it->second].cls.empty()) {
    result_->modules[it->second].cls = std::move(cls);
  }
  return it->second;
}

int32_t ModuleTreeBuilder::NodeOfParent(std::string_view name) {
  if (name.empty()) return -1;
  if (std::optional<ModuleName> m = ModuleOfEntry(name))
    return NodeOf(std::move(m->path), std::move(m->cls));
  return NodeOf(std::string(name), "");
}

void ModuleTreeBuilder::AddRows(const ModuleParents* parents, size_t first,
                                size_t end) {
  if (parents) {
    for (const std::string& name : parents->modules) {
      int32_t node = NodeOfParent(name);
      // Only forward calls nest as the modules do: a backward hook's parent
      // is whichever module's backward was running (another block's ReLU).
      if (name.find(".forward.") == std::string::npos) continue;
      int32_t up = NodeOfParent(parents->parent.at(name));
      if (up >= 0 && up != node) link_.emplace(node, up);
    }
  }
  std::vector<CompareRow>& rows = result_->rows;
  std::string_view last;
  int32_t last_module = -1;
  for (size_t i = first; i < end; ++i) {
    if (i == first || rows[i].entry != last) {
      last = rows[i].entry;
      last_module = -1;
      if (std::optional<ModuleName> m = ModuleOfEntry(last)) {
        last_module = NodeOf(std::move(m->path), std::move(m->cls));
      } else if (parents) {
        auto it = parents->parent.find(rows[i].entry);
        if (it != parents->parent.end()) last_module = NodeOfParent(it->second);
        // An operator's backward without a parent (lockstep's probe records
        // none) runs in the module that made its forward call.
        constexpr std::string_view kBackward = ".backward";
        if (last_module < 0 && last.size() > kBackward.size() &&
            last.ends_with(kBackward)) {
          std::string forward(last.substr(0, last.size() - kBackward.size()));
          forward += ".forward";
          auto f = parents->parent.find(forward);
          if (f != parents->parent.end()) last_module = NodeOfParent(f->second);
        }
      }
    }
    rows[i].module = last_module;
  }
}

int32_t ModuleTreeBuilder::PrefixParent(const std::string& path) const {
  // The nearest prefixes only: a path of thousands of dots (a hostile
  // construct.json) must not cost a lookup per dot for every module.
  constexpr int kMaxTries = 64;
  int tries = 0;
  for (size_t dot = path.rfind('.');
       dot != std::string::npos && dot > 0 && tries < kMaxTries;
       dot = path.rfind('.', dot - 1), ++tries) {
    auto it = index_.find(path.substr(0, dot));
    if (it != index_.end()) return it->second;
  }
  return -1;
}

namespace {

// The root of each node's tree while parents are set one node at a time: a
// union-find whose sets are the trees, each set knowing its tree's root.
// Linking a root under another tree's node and asking for a node's root
// cost near-constant time, so a parent chain 200,000 deep is read in
// linear time (walking up from each node was quadratic).
class TreeRoots {
 public:
  explicit TreeRoots(size_t n) : set_(n), size_(n, 1), root_(n) {
    for (size_t i = 0; i < n; ++i) set_[i] = root_[i] = static_cast<int32_t>(i);
  }
  int32_t RootOf(int32_t n) { return root_[Find(n)]; }
  // `child`, a tree's root, goes under `parent`, of another tree.
  void Link(int32_t child, int32_t parent) {
    int32_t a = Find(child), b = Find(parent);
    int32_t top = root_[b];
    if (size_[a] > size_[b]) std::swap(a, b);
    set_[a] = b;
    size_[b] += size_[a];
    root_[b] = top;
  }

 private:
  int32_t Find(int32_t n) {
    while (set_[n] != n) {
      set_[n] = set_[set_[n]];  // path halving
      n = set_[n];
    }
    return n;
  }
  std::vector<int32_t> set_, size_, root_;
};

}  // namespace

void ModuleTreeBuilder::Finish() {
  std::vector<ModuleNode>& nodes = result_->modules;
  // Node n has no parent yet when its turn comes, so it is its tree's root,
  // and it is above `up` exactly when `up`'s tree's root is n.
  TreeRoots roots(nodes.size());
  for (int32_t n = 0; n < static_cast<int32_t>(nodes.size()); ++n) {
    auto it = link_.find(n);
    int32_t up = it != link_.end() ? it->second : PrefixParent(nodes[n].path);
    // A construct.json that loops (corrupt) must not make the tree a graph.
    if (up >= 0 && roots.RootOf(up) == n) up = PrefixParent(nodes[n].path);
    if (up >= 0 && roots.RootOf(up) == n) up = -1;
    nodes[n].parent = up;
    if (up >= 0) roots.Link(n, up);
  }
}

void AttachDivergenceStack(CompareResult* result) {
  FirstDivergence& fd = result->first_divergence;
  fd.stack.clear();
  if (!fd.found) return;
  for (const RankStackFile& f : result->stack_files) {
    if (f.step != fd.step || f.rank != fd.rank) continue;
    StatusOr<StackMap> stack = ReadStackJson(f.path);
    if (!stack.ok()) {
      result->warnings.push_back("the first divergence's stack is left out: " +
                                 stack.status().message());
      return;
    }
    auto it = stack->find(fd.entry);
    if (it != stack->end()) fd.stack = std::move(it->second);
    return;
  }
}

}  // namespace lockstep
