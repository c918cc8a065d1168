// What the two halves of `lockstep compare` share: the command line as
// parsed (compare_cmd.cc), what the checks before the heavy work leave for
// it, and the compare itself with its reports (compare_reports.cc).
#ifndef LOCKSTEP_SRC_CLI_COMPARE_CMD_INTERNAL_H_
#define LOCKSTEP_SRC_CLI_COMPARE_CMD_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/common_options.h"
#include "lockstep/compare/comparator.h"
#include "lockstep/compare/compare_share.h"
#include "lockstep/core/file.h"

namespace lockstep::cli::compare_cmd {

struct Args {
  std::string target, baseline, out_dir = "./output";
  std::string target_path, golden_path, data_mapping;  // msprobe's names
  // msprobe's -am [FILE], -cm FILE, -lm FILE.
  bool api_mapping = false;
  std::string api_mapping_file, cell_mapping, layer_mapping;
  bool layer_mapped = false;  // -lm, with or without a FILE
  std::vector<int64_t> steps, ranks;
  std::string mode = "auto";
  std::string fuzzy_rule;  // "" (none given), "msprobe" or "1.2.2"
  // --fuzzy-match, or implied by --fuzzy-rule (set once, after parsing).
  bool fuzzy = false, align = false, no_align = false, xlsx = false;
  bool renumber = false;
  int jobs = 0;
  std::string target_log, baseline_log, curve_metric = "loss";
  LoggingOptions logging;
};

// What the checks before the heavy work leave for it.
struct Prepared {
  bool checkpoints = false;
  CompareOptions options;
  std::string curves_svg;
  std::unique_ptr<DirLock> lock;  // the output directory, while ours
};

// Compares, prints and writes the reports; the exit code. In a group, only
// process 0 has the result (the others compare their share and return 0).
int Compare(const Args& a, Prepared& p, ShareGroup* group);

}  // namespace lockstep::cli::compare_cmd

#endif  // LOCKSTEP_SRC_CLI_COMPARE_CMD_INTERNAL_H_
