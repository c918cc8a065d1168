// lockstep rng --seed S --count N: prints a reproducible Philox stream, one
// value per line, so that two builds or machines can be diffed.
//
// Output format: uint32 as 8 lowercase hex digits; uniform and normal as
// printf("%.9g") (9 significant digits round-trip every float exactly);
// bernoulli as 0 or 1. Element k of the output is element start + k of the
// stream (see lockstep/numerics/philox.h for the mapping).
#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/common_options.h"
#include "lockstep/core/log.h"
#include "lockstep/numerics/philox.h"

namespace lockstep::cli {
namespace rng_cmd {  // named: the CLI builds as a unity build
namespace {

constexpr uint64_t kMaxCount = 1000000000;  // 1e9 lines
constexpr size_t kChunk = 1 << 16;

enum class Dist { kUint32, kUniform, kNormal, kBernoulli };
const std::map<std::string, Dist> kDistNames = {
    {"uint32", Dist::kUint32},
    {"uniform", Dist::kUniform},
    {"normal", Dist::kNormal},
    {"bernoulli", Dist::kBernoulli}};
const std::vector<std::string> kDists = {"uint32", "uniform", "normal",
                                         "bernoulli"};

struct RngOptions {
  uint64_t seed = 0;
  uint64_t offset = 0;
  uint64_t start = 0;
  uint64_t count = 0;
  Dist dist = Dist::kUint32;
  double p = 0.5;
};

// CLI11 wraps "-1" into a uint64 silently; reject a sign up front.
const CLI::Validator kNonNegative(
    [](std::string& v) {
      return v.find('-') == std::string::npos
                 ? std::string()
                 : "must be a non-negative integer, got " + v;
    },
    "UINT64");

// Prints elements [start, start + n) of the chosen distribution.
void PrintChunk(const RngOptions& o, uint64_t start, size_t n) {
  if (o.dist == Dist::kUint32) {
    std::vector<uint32_t> v(n);
    FillUint32(o.seed, o.offset, start, n, v.data());
    for (uint32_t x : v) std::printf("%08x\n", x);
  } else if (o.dist == Dist::kBernoulli) {
    std::vector<uint8_t> v(n);
    FillBernoulli(o.seed, o.offset, start, n, o.p, v.data());
    for (uint8_t x : v) std::printf("%d\n", x);
  } else {
    std::vector<float> v(n);
    if (o.dist == Dist::kUniform) {
      FillUniform(o.seed, o.offset, start, n, v.data());
    } else {
      FillNormal(o.seed, o.offset, start, n, v.data());
    }
    for (float x : v) std::printf("%.9g\n", static_cast<double>(x));
  }
}

// Checks what CLI11 cannot: bounds that involve two options.
Status Validate(const RngOptions& o) {
  if (o.count > kMaxCount) {
    return Status::InvalidArgument(
        "rng --count", std::to_string(o.count) +
                           " exceeds 1000000000. Note: print the stream in "
                           "pieces with --start");
  }
  if (o.start > std::numeric_limits<uint64_t>::max() - o.count) {
    return Status::InvalidArgument(
        "rng --start", "start + count passes 2^64. Note: lower --start");
  }
  if (!(o.p >= 0.0 && o.p <= 1.0)) {
    return Status::InvalidArgument("rng --p", "must be in [0, 1]");
  }
  return Status::Ok();
}

int Run(int argc, char** argv) {
  RngOptions o;
  LoggingOptions logging;
  CLI::App app{
      "Print elements [start, start + count) of the reproducible Philox4x32-10 "
      "stream (seed, offset), one per line: the same bits on every machine."
      "\nExit: 0 printed, 2 usage error.",
      "rng"};
  app.footer("Example:\n  lockstep rng --seed 42 --count 4 --dist normal");
  std::string dist = "uint32";
  app.add_option("--seed", o.seed, "Stream seed (uint64)")
      ->required()
      ->check(kNonNegative);
  app.add_option("--offset", o.offset, "Sub-stream, e.g. the step (uint64)")
      ->check(kNonNegative);
  app.add_option("--count", o.count, "Number of values (at most 1e9)")
      ->required()
      ->check(kNonNegative);
  app.add_option("--start", o.start, "Index of the first value (default 0)")
      ->check(kNonNegative);
  app.add_option("--dist", dist, "uint32 (default), uniform, normal, bernoulli")
      ->check(CLI::IsMember(kDists));
  app.add_option("--p", o.p, "Probability of 1 for --dist bernoulli");
  AddLoggingOptions(app, &logging);
  if (int rc = ParseOrExit(app, argc, argv); rc >= 0) return rc;
  ApplyLoggingOptions(logging);
  o.dist = kDistNames.at(dist);
  if (Status s = Validate(o); !s.ok()) return ReportError(s);
  for (uint64_t done = 0; done < o.count; done += kChunk) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, o.count - done));
    PrintChunk(o, o.start + done, n);
  }
  return kExitPass;
}

}  // namespace
}  // namespace rng_cmd

int RunRng(int argc, char** argv) { return rng_cmd::Run(argc, argv); }

}  // namespace lockstep::cli
