// GradScaler's text forms: the --loss-scale spec and the state_dict.
#include <cmath>
#include <cstdlib>
#include <string>

#include "lockstep/torch/grad_scaler.h"

namespace lockstep {
namespace {

constexpr std::string_view kMagic = "lockstep-grad-scaler";
constexpr int kVersion = 1;
constexpr std::string_view kStateSubject = "GradScaler state_dict";

Status BadSpec(std::string_view spec, std::string_view problem) {
  std::string presets;
  for (std::string_view p : LossScaleState::PresetNames()) {
    if (!presets.empty()) presets += '|';
    presets += p;
  }
  return Status::InvalidArgument(
      "loss scale '" + std::string(spec) + "'",
      std::string(problem) + ". Note: use fixed:SCALE or dynamic[:" + presets +
          "]");
}

// Splits off the first line of `*text` (without its '\n').
std::string_view NextLine(std::string_view* text) {
  size_t nl = text->find('\n');
  std::string_view line = text->substr(0, nl);
  *text =
      nl == std::string_view::npos ? std::string_view() : text->substr(nl + 1);
  return line;
}

// Reads "key value" on line `line_no`; Corruption when it is not.
StatusOr<std::string> Field(std::string_view* text, std::string_view key,
                            int line_no) {
  std::string_view line = NextLine(text);
  std::string prefix = std::string(key) + " ";
  if (line.substr(0, prefix.size()) != prefix || line.size() == prefix.size()) {
    return Status::Corruption(kStateSubject, "line " + std::to_string(line_no) +
                                                 ": expected '" +
                                                 std::string(key) + " VALUE'");
  }
  return std::string(line.substr(prefix.size()));
}

Status CheckHeader(std::string_view line) {
  std::string prefix = std::string(kMagic) + " ";
  if (line.substr(0, prefix.size()) != prefix) {
    return Status::Corruption(kStateSubject,
                              "line 1: expected '" + std::string(kMagic) + " " +
                                  std::to_string(kVersion) +
                                  "'. Note: is this a GradScaler state?");
  }
  std::string v(line.substr(prefix.size()));
  char* end = nullptr;
  long version = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0') {
    return Status::Corruption(kStateSubject, "line 1: bad version '" + v + "'");
  }
  if (version != kVersion) {
    return Status::NotSupported(
        kStateSubject,
        "version " + v + "; this build reads " + std::to_string(kVersion));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<LossScaleOptions> ParseLossScaleSpec(std::string_view spec) {
  size_t colon = spec.find(':');
  std::string_view kind = spec.substr(0, colon);
  std::string_view arg =
      colon == std::string_view::npos ? "" : spec.substr(colon + 1);
  bool has_arg = colon != std::string_view::npos;
  if (kind == "dynamic") {
    if (!has_arg) return *LossScaleState::Preset("pytorch");
    StatusOr<LossScaleOptions> o = LossScaleState::Preset(arg);
    if (!o.ok())
      return BadSpec(spec, "unknown preset '" + std::string(arg) + "'");
    return o;
  }
  if (kind != "fixed") return BadSpec(spec, "unknown kind");
  if (arg.empty()) return BadSpec(spec, "fixed needs a scale");
  std::string s(arg);
  char* end = nullptr;
  double scale = std::strtod(s.c_str(), &end);
  if (*end != '\0' || !std::isfinite(scale) || scale <= 0) {
    return BadSpec(spec, "the scale must be a finite number > 0");
  }
  LossScaleOptions o;
  o.dynamic = false;
  o.drop_overflow_update = true;
  o.init_scale = scale;
  Status valid = LossScaleState::Validate(o);
  if (!valid.ok()) return BadSpec(spec, valid.message());
  return o;
}

std::string GradScaler::StateDict() const {
  return std::string(kMagic) + " " + std::to_string(kVersion) + "\ncheck " +
         OverflowCheckName(options_.check) + "\nmode " +
         StepModeName(options_.mode) + "\n" + state_.SaveState();
}

Status GradScaler::LoadStateDict(std::string_view text) {
  for (const auto& [opt, s] : per_opt_) {
    if (s.stage != Stage::kReady) {
      return Status::InvalidArgument(
          kStateSubject,
          "loaded during an iteration. Note: load before the "
          "first Unscale/Step or right after Update()");
    }
  }
  LOCKSTEP_RETURN_IF_ERROR(CheckHeader(NextLine(&text)));
  StatusOr<std::string> check = Field(&text, "check", 2);
  if (!check.ok()) return check.status();
  StatusOr<std::string> mode = Field(&text, "mode", 3);
  if (!mode.ok()) return mode.status();
  if (*check != OverflowCheckName(options_.check) ||
      *mode != StepModeName(options_.mode)) {
    return Status::InvalidArgument(
        kStateSubject, "saved with check '" + *check + "', mode '" + *mode +
                           "'; this scaler uses '" +
                           OverflowCheckName(options_.check) + "', '" +
                           StepModeName(options_.mode) + "'");
  }
  StatusOr<LossScaleState> state = LossScaleState::LoadState(text);
  if (!state.ok()) return state.status().WithContext(kStateSubject);
  options_.loss_scale = state->options();
  state_ = std::move(*state);
  return Status::Ok();
}

}  // namespace lockstep
