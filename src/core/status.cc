#include "lockstep/core/status.h"

namespace lockstep {

std::string_view StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "Invalid argument";
    case StatusCode::kNotFound:
      return "Not found";
    case StatusCode::kCorruption:
      return "Corruption";
    case StatusCode::kIoError:
      return "IO error";
    case StatusCode::kNotSupported:
      return "Not supported";
    case StatusCode::kInternal:
      return "Internal";
  }
  return "Unknown";
}

Status::Status(StatusCode code, std::string_view subject,
               std::string_view problem)
    : code_(code) {
  message_.append(subject);
  if (!subject.empty() && !problem.empty()) message_.append(": ");
  message_.append(problem);
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out(StatusCodeName(code_));
  out.append(": ");
  out.append(message_);
  return out;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  Status s = *this;
  s.message_ = std::string(context) + ": " + message_;
  return s;
}

}  // namespace lockstep
