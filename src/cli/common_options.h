// Option groups shared by lockstep's commands (declared once, reused), and
// the mapping from a Status to an exit code and an "[E]" line.
#ifndef LOCKSTEP_CLI_COMMON_OPTIONS_H_
#define LOCKSTEP_CLI_COMMON_OPTIONS_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "lockstep/core/status.h"
#include "lockstep/core/words.h"

namespace lockstep::cli {

struct LoggingOptions {
  bool quiet = false;
  bool verbose = false;
};

// -q/--quiet and -v/--verbose.
void AddLoggingOptions(CLI::App& app, LoggingOptions* opts);
// Applies them (SetLogLevel).
void ApplyLoggingOptions(const LoggingOptions& opts);

// Prints "[E] <message>" and returns the exit code for `s`: 2 for invalid
// arguments, 3 for I/O and format errors.
int ReportError(const Status& s);

// Parses argv with CLI11; on --help prints help and returns 0, on a parse
// error prints it with a note and returns 2; returns -1 when parsing worked.
// An unknown option ("--outptu") gets a "did you mean '--output'?" note.
int ParseOrExit(CLI::App& app, int argc, char** argv);

// Turns a metric as the user typed it (a log's own column name: "lr",
// "train/loss") into the name the curve readers store it under
// (CanonicalMetricName: "learning_rate", "loss").
CLI::Validator CanonicalMetric();

}  // namespace lockstep::cli

#endif  // LOCKSTEP_CLI_COMMON_OPTIONS_H_
