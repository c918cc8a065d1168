// msprobe compare's custom API mapping file (`-am FILE`): which MindSpore
// API a PyTorch API stands for, and which of its arguments, outputs and
// parameters pair with which. A YAML list of entries in block style:
//
//   - ms_api: Functional.flash_attention_score
//     pt_api: NPU.npu_fusion_attention
//     ms_args: [0, 1, 2, attn_mask]      # positions or keyword names
//     pt_args: [1, 0, 2, atten_mask]
//     ms_output: [0]                     # msprobe's docs say ms_outputs
//     pt_output: [0]
//
// Lists are flow (`[a, b]`) or block (`- a` lines under the key); scalars
// plain or quoted. Also read, where msprobe 26.2 crashes: the single entry
// without the leading `- ` that msprobe's docs show, and the documented
// plural keys ms_outputs/pt_outputs (read as ms_output/pt_output).
// Refused with their line: unknown keys (a misspelled key would silently
// unpair rows), a key given twice, an entry without ms_api or pt_api, a
// list key given a scalar, and anything outside this subset.
//
// Thread safety: pure functions.
#ifndef LOCKSTEP_FORMAT_API_MAPPING_FILE_H_
#define LOCKSTEP_FORMAT_API_MAPPING_FILE_H_

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"

namespace lockstep {

// What a list pairs: args (positional and keyword inputs, forward and
// backward), outputs, parameters, parameter gradients.
enum class ApiMappingTerm { kArgs, kOutput, kParameters, kParametersGrad };
inline constexpr int kApiMappingTerms = 4;

struct ApiMappingEntry {
  std::string ms_api;  // "Functional.flash_attention_score"
  std::string pt_api;  // "NPU.npu_fusion_attention"
  // Per ApiMappingTerm: the MindSpore items and the PyTorch items they map
  // to, as text ("0", "attn_mask"); an absent key is an empty list.
  std::array<std::vector<std::string>, kApiMappingTerms> ms, pt;
  int line = 0;  // where the entry starts in the file
};

// The entries in file order. Errors: Corruption naming `subject` and the
// line.
StatusOr<std::vector<ApiMappingEntry>> ParseApiMappingFile(
    std::string_view text, std::string_view subject);

// Reads and parses `path`. Errors: NotFound/IoError, or as above.
StatusOr<std::vector<ApiMappingEntry>> ReadApiMappingFile(
    const std::string& path);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_API_MAPPING_FILE_H_
