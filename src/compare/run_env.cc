#include "lockstep/compare/run_env.h"

#include <filesystem>
#include <map>

#include "lockstep/compare/env_diff.h"
#include "lockstep/core/file.h"
#include "lockstep/format/discovery.h"
#include "lockstep/format/env_fingerprint.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxLevelsUp = 2;  // rank dir -> step dir -> dump root
constexpr size_t kMaxPerSection = 2;

std::string EnvIn(const fs::path& dir) {
  fs::path p = dir / kEnvFileName;
  return PathExists(p.string()) ? p.string() : std::string();
}

bool IsStepOrRankName(const std::string& name) {
  return name.rfind("rank", 0) == 0 || name.rfind("proc", 0) == 0 ||
         name.rfind("step", 0) == 0;
}

}  // namespace

std::string FindEnvFingerprint(const std::string& path) {
  std::error_code ec;
  fs::path dir = fs::absolute(path, ec).lexically_normal();
  if (ec) return "";
  if (!dir.has_filename()) dir = dir.parent_path();  // trailing '/'
  if (!IsDirectory(dir.string())) dir = dir.parent_path();
  for (int up = 0; up <= kMaxLevelsUp; ++up) {
    if (std::string e = EnvIn(dir); !e.empty()) return e;
    if (!IsStepOrRankName(dir.filename().string())) break;
    dir = dir.parent_path();
  }
  StatusOr<DumpLayout> layout = DiscoverDump(path);
  if (!layout.ok()) return "";
  if (std::string e = EnvIn(layout->root); !e.empty()) return e;
  for (const StepLayout& s : layout->steps) {
    if (!s.dir.empty()) {
      if (std::string e = EnvIn(s.dir); !e.empty()) return e;
    }
    for (const RankLayout& r : s.ranks) {
      if (std::string e = EnvIn(r.dir); !e.empty()) return e;
    }
  }
  return "";
}

std::vector<std::string> RunEnvWarnings(const std::string& target,
                                        const std::string& baseline,
                                        size_t max_listed) {
  std::string ta = FindEnvFingerprint(target);
  std::string ba = FindEnvFingerprint(baseline);
  if (ta.empty() || ba.empty()) return {};
  StatusOr<EnvFingerprint> t = ReadEnvFingerprint(ta);
  StatusOr<EnvFingerprint> b = ReadEnvFingerprint(ba);
  std::vector<std::string> out;
  for (const auto* s : {&t, &b}) {
    if (!s->ok()) {
      out.push_back("environment check skipped: " + s->status().message());
    }
  }
  if (!out.empty()) return out;
  EnvDiff diff = DiffEnvFingerprints(*t, *b);
  if (diff.relevant() == 0) return {};
  out.push_back("environment differs: " + std::to_string(diff.relevant()) +
                " difference(s) that may change numbers (target " + ta +
                " vs baseline " + ba + "; 'lockstep env diff' lists all)");
  // The top ones, at most kMaxPerSection of a section, so that one section
  // (e.g. all the seeds) does not hide the next.
  std::map<std::string, size_t> per_section;
  size_t listed = 0;
  for (const EnvDifference& d : diff.differences) {
    if (listed == max_listed || d.impact == EnvImpact::kNone) break;
    if (++per_section[d.key.substr(0, d.key.find('.'))] > kMaxPerSection) {
      continue;
    }
    out.push_back("  " + DescribeEnvDifference(d));
    ++listed;
  }
  return out;
}

}  // namespace lockstep
