#include "lockstep/compare/model_context.h"

#include <utility>

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
  for (size_t dot = path.rfind('.'); dot != std::string::npos && dot > 0;
       dot = path.rfind('.', dot - 1)) {
    auto it = index_.find(path.substr(0, dot));
    if (it != index_.end()) return it->second;
  }
  return -1;
}

bool ModuleTreeBuilder::IsAncestor(int32_t a, int32_t n) const {
  // Parents are set one node at a time without cycles, so a walk ends.
  for (; n >= 0; n = result_->modules[n].parent) {
    if (n == a) return true;
  }
  return false;
}

void ModuleTreeBuilder::Finish() {
  std::vector<ModuleNode>& nodes = result_->modules;
  for (int32_t n = 0; n < static_cast<int32_t>(nodes.size()); ++n) {
    auto it = link_.find(n);
    int32_t up = it != link_.end() ? it->second : PrefixParent(nodes[n].path);
    // A construct.json that loops (corrupt) must not make the tree a graph.
    if (up >= 0 && IsAncestor(n, up)) up = PrefixParent(nodes[n].path);
    if (up >= 0 && IsAncestor(n, up)) up = -1;
    nodes[n].parent = up;
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
