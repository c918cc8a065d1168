#include "lockstep/numerics/lr_schedule_state.h"

#include <limits>
#include <utility>

#include "lockstep/core/check.h"
#include "numerics/kv_text.h"

namespace lockstep {
namespace {

using internal::HexDouble;
using internal::KeyValueReader;

constexpr std::string_view kMagic = "lockstep-lr-schedule";
constexpr int kVersion = 1;
constexpr std::string_view kSubject = "lr-schedule state";

template <typename T, typename F>
std::string Join(const std::vector<T>& v, F format) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out += ',';
    out += format(v[i]);
  }
  return out;
}

void PutConfig(const ScheduleConfig& c, std::string* out) {
  auto put = [out](std::string_view k, const std::string& v) {
    internal::PutKeyValue(out, k, v);
  };
  auto i = [](int64_t v) { return std::to_string(v); };
  auto b = [](bool v) { return std::string(v ? "1" : "0"); };
  put("kind", std::string(ScheduleKindName(c.kind)));
  put("max_lr", HexDouble(c.max_lr));
  put("min_lr", HexDouble(c.min_lr));
  put("warmup_steps", i(c.warmup_steps));
  put("decay_steps", i(c.decay_steps));
  put("total_steps", i(c.total_steps));
  put("stable_steps", i(c.stable_steps));
  put("period", i(c.period));
  put("period_mult", i(c.period_mult));
  put("decay_rate", HexDouble(c.decay_rate));
  put("staircase", b(c.staircase));
  put("power", HexDouble(c.power));
  put("cycles", HexDouble(c.cycles));
  put("pct_start", HexDouble(c.pct_start));
  put("div_factor", HexDouble(c.div_factor));
  put("final_div_factor", HexDouble(c.final_div_factor));
  put("three_phase", b(c.three_phase));
  put("anneal", std::string(RampShapeName(c.anneal)));
  put("warmup_shape", std::string(RampShapeName(c.warmup_shape)));
  put("decay_shape", std::string(RampShapeName(c.decay_shape)));
  put("timescale", i(c.timescale));
  put("boundaries", Join(c.boundaries, i));
  put("values", Join(c.values, HexDouble));
}

// A name read back: Corruption (not InvalidArgument) when unknown.
template <typename T>
Status ReadName(StatusOr<T> parsed, const char* key, T* out) {
  if (!parsed.ok()) {
    return Status::Corruption(
        kSubject, std::string(key) + ": " + parsed.status().message());
  }
  *out = *parsed;
  return Status::Ok();
}

Status ReadNames(KeyValueReader* r, ScheduleConfig* c) {
  LOCKSTEP_RETURN_IF_ERROR(
      ReadName(ScheduleKindFromName(r->Str("kind")), "kind", &c->kind));
  LOCKSTEP_RETURN_IF_ERROR(
      ReadName(RampShapeFromName(r->Str("anneal")), "anneal", &c->anneal));
  LOCKSTEP_RETURN_IF_ERROR(ReadName(RampShapeFromName(r->Str("warmup_shape")),
                                    "warmup_shape", &c->warmup_shape));
  return ReadName(RampShapeFromName(r->Str("decay_shape")), "decay_shape",
                  &c->decay_shape);
}

StatusOr<ScheduleConfig> ReadConfig(KeyValueReader* r) {
  ScheduleConfig c;
  c.max_lr = r->Double("max_lr");
  c.min_lr = r->Double("min_lr");
  c.warmup_steps = r->Int("warmup_steps");
  c.decay_steps = r->Int("decay_steps");
  c.total_steps = r->Int("total_steps");
  c.stable_steps = r->Int("stable_steps");
  c.period = r->Int("period");
  c.period_mult = r->Int("period_mult");
  c.decay_rate = r->Double("decay_rate");
  c.staircase = r->Bool("staircase");
  c.power = r->Double("power");
  c.cycles = r->Double("cycles");
  c.pct_start = r->Double("pct_start");
  c.div_factor = r->Double("div_factor");
  c.final_div_factor = r->Double("final_div_factor");
  c.three_phase = r->Bool("three_phase");
  c.timescale = r->Int("timescale");
  c.boundaries = r->IntList("boundaries");
  c.values = r->DoubleList("values");
  LOCKSTEP_RETURN_IF_ERROR(r->status());
  LOCKSTEP_RETURN_IF_ERROR(ReadNames(r, &c));
  LOCKSTEP_RETURN_IF_ERROR(r->status());
  return c;
}

}  // namespace

LrScheduleState::LrScheduleState(LrSchedule schedule, int64_t step)
    : schedule_(std::move(schedule)), step_(step) {
  LOCKSTEP_CHECK(step >= 0);
}

void LrScheduleState::Advance() {
  LOCKSTEP_CHECK(step_ < std::numeric_limits<int64_t>::max());
  ++step_;
}

std::string LrScheduleState::SaveState() const {
  std::string out = std::string(kMagic) + " " + std::to_string(kVersion) + "\n";
  PutConfig(schedule_.config(), &out);
  internal::PutKeyValue(&out, "step", std::to_string(step_));
  return out;
}

StatusOr<LrScheduleState> LrScheduleState::LoadState(std::string_view text) {
  internal::KeyValues fields;
  LOCKSTEP_RETURN_IF_ERROR(
      internal::ParseKeyValueText(text, kMagic, kVersion, kSubject, &fields));
  KeyValueReader r(fields, kSubject);
  LOCKSTEP_ASSIGN_OR_RETURN(ScheduleConfig config, ReadConfig(&r));
  int64_t step = r.Int("step");
  LOCKSTEP_RETURN_IF_ERROR(r.status());
  LOCKSTEP_RETURN_IF_ERROR(r.CheckNoUnknownKeys());
  StatusOr<LrSchedule> schedule = LrSchedule::Create(config);
  if (!schedule.ok()) {
    return Status::Corruption(kSubject, schedule.status().message());
  }
  if (step < 0) {
    return Status::Corruption(kSubject,
                              "step " + std::to_string(step) + " is negative");
  }
  return LrScheduleState(*std::move(schedule), step);
}

}  // namespace lockstep
