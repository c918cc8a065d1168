// A curve comparison as JSON, for scripts and CI:
//
//   {"metric": "loss", "tol_abs": 0, "tol_rel": 0, "smoothing": 0,
//    "verdict": "PASS: ...", "passed": true,
//    "diverged": false, "common_steps": 187,
//    "max_abs_diff": 0.0012, "mean_abs_diff": ..., "max_rel_diff": ...,
//    "mean_rel_diff": ..., "first_divergent_step": null,
//    "divergent_steps": 0, "nonfinite_mismatches": 0,
//    "first_divergent_source": null,
//    "inputs": [{"source": "a.log", "format": "megatron", "points": 200,
//                "duplicate_steps": 0, "reference": true,
//                "common_steps": ..., "max_abs_diff": ..., "max_abs_diff_step":
//                ..., "mean_abs_diff": ..., "max_rel_diff": ...,
//                "mean_rel_diff": ..., "first_divergent_step": null,
//                "divergent_steps": 0, "nonfinite_mismatches": 0,
//                "only_steps": [...], "missing_steps": [...],
//                "nonfinite_steps": [...],
//                "loss_scale_drops": [{"step": 2, "from": 65536, "to": 32768}],
//                "skipped_steps": [...], "skipped_total": 0}, ...]}
//
// The difference fields of the reference (inputs[0]) are 0 / empty / null.
// Non-finite numbers (nan, ±inf: e.g. max_rel_diff against a zero
// reference) are written as null, since JSON has no token for them.
// Thread safety: pure functions.
#ifndef LOCKSTEP_CURVE_CURVE_JSON_H_
#define LOCKSTEP_CURVE_CURVE_JSON_H_

#include <string>

#include "lockstep/core/status.h"
#include "lockstep/curve/curve_compare.h"

namespace lockstep {

// The document above, pretty-printed (indent 1).
std::string CurveComparisonToJson(const CurveComparison& c);

// Writes it atomically to `path`. Errors: IoError naming the path.
Status WriteCurveJson(const std::string& path, const CurveComparison& c);

}  // namespace lockstep

#endif  // LOCKSTEP_CURVE_CURVE_JSON_H_
