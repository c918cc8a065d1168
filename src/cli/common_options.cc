#include "cli/common_options.h"

#include "cli/commands.h"
#include "lockstep/core/log.h"

namespace lockstep::cli {

void AddLoggingOptions(CLI::App& app, LoggingOptions* opts) {
  app.add_flag("-q,--quiet", opts->quiet,
               "Print only warnings, errors and the verdict")
      ->group("Logging");
  app.add_flag("-v,--verbose", opts->verbose, "Print more detail")
      ->group("Logging");
}

void ApplyLoggingOptions(const LoggingOptions& opts) {
  if (opts.quiet) SetLogLevel(LogLevel::kWarning);
  if (opts.verbose) SetLogLevel(LogLevel::kVerbose);
}

int ReportError(const Status& s) {
  LogError(s.message());
  return s.code() == StatusCode::kInvalidArgument ? kExitUsage : kExitIo;
}

int ParseOrExit(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    return kExitPass;
  } catch (const CLI::ParseError& e) {
    LogError(app.get_name() + " | " + e.what() + ". Note: run 'lockstep " +
             app.get_name() + " --help'");
    return kExitUsage;
  }
  return -1;
}

}  // namespace lockstep::cli
