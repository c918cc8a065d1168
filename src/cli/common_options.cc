#include "cli/common_options.h"

#include <algorithm>

#include "cli/commands.h"
#include "lockstep/core/log.h"
#include "lockstep/curve/readers.h"

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

CLI::Validator CanonicalMetric() {
  return CLI::Validator(
      [](std::string& s) {
        s = CanonicalMetricName(s);
        return std::string();
      },
      "");
}

namespace {

// " Note: did you mean '--output'?" for the first unknown option of an
// "arguments were not expected" error, or "".
std::string OptionHint(const CLI::App& app,
                       const std::vector<std::string>& extras) {
  std::vector<std::string> names;
  for (const CLI::Option* o : app.get_options()) {
    for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  }
  for (const std::string& x : extras) {
    if (x.size() < 2 || x[0] != '-') continue;
    std::string flag = x.substr(0, x.find('='));
    std::string close = ClosestWord(flag, names);
    // A long option cut short ("--fuzzy" for "--fuzzy-match").
    for (const std::string& n : names) {
      if (close.empty() && flag.size() >= 4 && flag.starts_with("--") &&
          n.starts_with(flag)) {
        close = n;
      }
    }
    if (!close.empty()) return " Note: did you mean '" + close + "'?";
  }
  return "";
}

}  // namespace

int ParseOrExit(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", app.help().c_str());
    return kExitPass;
  } catch (const CLI::ParseError& e) {
    std::string hint;
    std::string what = e.what();
    // An unknown option is the likelier mistake when a required one is
    // missing too ("--sed 3" for "--seed 3"): name it first.
    std::vector<std::string> unknown;
    for (const std::string& x : app.remaining()) {
      if (x.size() > 1 && x[0] == '-') unknown.push_back(x);
    }
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr &&
        !unknown.empty()) {
      what = "The following argument was not expected: " + unknown[0];
    }
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr ||
        what != e.what())
      hint = OptionHint(app, app.remaining());
    LogError(app.get_name() + " | " + what + "." +
             (hint.empty()
                  ? " Note: run 'lockstep " + app.get_name() + " --help'"
                  : hint));
    return kExitUsage;
  }
  return -1;
}

}  // namespace lockstep::cli
