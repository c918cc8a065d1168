// msprobe HEAD's Result / Err_message rules (docs/msprobe_reference.md §3.8;
// msprobe core/compare/indicator_analysis): rows are grouped per dump entry,
// each row starts as "pass" and checkers can only raise it. Reproduced
// faithfully, quirks included: earlier messages are discarded and unmatched
// rows can end as "pass". lockstep's own verdict (verdict.h) does not share
// those quirks.
// Thread safety: pure functions.
#ifndef LOCKSTEP_COMPARE_RESULT_RULES_H_
#define LOCKSTEP_COMPARE_RESULT_RULES_H_

#include <vector>

#include "lockstep/compare/msprobe_row.h"
#include "lockstep/compare/result.h"

namespace lockstep {

// Sets result and err_messages on every row. `rows` are in output order; rows
// of one entry are contiguous.
void ApplyMsprobeRules(CompareMode mode, std::vector<MsprobeRow>* rows);

// JSON list of strings as Python's json.dumps writes it: ["a", "b"].
std::string PyJsonList(const std::vector<std::string>& items);

}  // namespace lockstep

#endif  // LOCKSTEP_COMPARE_RESULT_RULES_H_
