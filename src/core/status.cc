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

std::string Abbreviate(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t n = max_bytes;
  // Back up over UTF-8 continuation bytes (10xxxxxx) to a character start.
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  std::string out(text.substr(0, n));
  out += "...(" + std::to_string(text.size()) + " bytes)";
  return out;
}

Status::Status(StatusCode code, std::string_view subject,
               std::string_view problem)
    : code_(code) {
  if (subject.size() > kMaxStatusSubject) {
    message_ = Abbreviate(subject, kMaxStatusSubject);
  } else {
    message_.append(subject);
  }
  if (!subject.empty() && !problem.empty()) message_.append(": ");
  if (problem.size() > kMaxStatusProblem) {
    message_ += Abbreviate(problem, kMaxStatusProblem);
  } else {
    message_.append(problem);
  }
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
  s.message_ = Abbreviate(context, kMaxStatusSubject) + ": " + message_;
  return s;
}

}  // namespace lockstep
