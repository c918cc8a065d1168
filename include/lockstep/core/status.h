// Status and StatusOr<T>: how lockstep reports failures of user input, data
// and I/O. Internal invariants use LOCKSTEP_CHECK (core/check.h) instead.
//
// A message names the subject and the problem, Polygraphy style:
//   "dump.json: entry 'Functional.linear.0.forward': shape has 3 dims but 2
//   strides"
// Messages stay short whatever the input held: a subject beyond
// kMaxStatusSubject bytes or a problem beyond kMaxStatusProblem is cut
// (Abbreviate), so that a name of megabytes in a hostile file never reaches
// the terminal whole.
// Thread safety: Status and StatusOr are values; distinct objects may be used
// from distinct threads without synchronization.
#ifndef LOCKSTEP_CORE_STATUS_H_
#define LOCKSTEP_CORE_STATUS_H_

#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace lockstep {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller (user) gave a bad option or value
  kNotFound,         // a file, entry or key is missing
  kCorruption,       // data is malformed: truncated, bad magic, bad syntax
  kIoError,          // the operating system refused a read or write
  kNotSupported,     // valid input that lockstep cannot handle (yet)
  kInternal,         // a bug in lockstep
};

// Name of a code, e.g. "Corruption".
std::string_view StatusCodeName(StatusCode code);

inline constexpr size_t kMaxStatusSubject = 1024;
inline constexpr size_t kMaxStatusProblem = 4096;

// `text` when it has at most `max_bytes` bytes; else its first bytes (cut
// at a UTF-8 character boundary) and "...(N bytes)" naming its size, at
// most `max_bytes` + 24 bytes in all. For quoting input in messages.
std::string Abbreviate(std::string_view text, size_t max_bytes = 200);

class [[nodiscard]] Status {
 public:
  // An OK status.
  Status() = default;
  // `subject` names the thing (a file, an entry, an option); `problem` says
  // what is wrong with it. Either may be empty.
  Status(StatusCode code, std::string_view subject, std::string_view problem);

  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string_view subject,
                                std::string_view problem = {}) {
    return Status(StatusCode::kInvalidArgument, subject, problem);
  }
  static Status NotFound(std::string_view subject,
                         std::string_view problem = {}) {
    return Status(StatusCode::kNotFound, subject, problem);
  }
  static Status Corruption(std::string_view subject,
                           std::string_view problem = {}) {
    return Status(StatusCode::kCorruption, subject, problem);
  }
  static Status IoError(std::string_view subject,
                        std::string_view problem = {}) {
    return Status(StatusCode::kIoError, subject, problem);
  }
  static Status NotSupported(std::string_view subject,
                             std::string_view problem = {}) {
    return Status(StatusCode::kNotSupported, subject, problem);
  }
  static Status Internal(std::string_view subject,
                         std::string_view problem = {}) {
    return Status(StatusCode::kInternal, subject, problem);
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  // "subject: problem" (or just one of them); "OK" when ok().
  const std::string& message() const { return message_; }
  // "Corruption: subject: problem".
  std::string ToString() const;

  // Returns a copy whose message is prefixed with `context` + ": ".
  Status WithContext(std::string_view context) const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// A T or an error Status. REQUIRES: the Status given is not OK.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(Status status) : v_(std::move(status)) {  // NOLINT: implicit
    if (std::get<Status>(v_).ok()) {
      v_ = Status::Internal("StatusOr", "constructed from an OK status");
    }
  }
  StatusOr(T value) : v_(std::move(value)) {}  // NOLINT: implicit

  bool ok() const { return std::holds_alternative<T>(v_); }
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  // REQUIRES: ok().
  T& value() & { return Get(); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::move(Get()); }
  T& operator*() & { return Get(); }
  const T& operator*() const& { return std::get<T>(v_); }
  T* operator->() { return &Get(); }
  const T* operator->() const { return &std::get<T>(v_); }

 private:
  T& Get() {
    if (!ok()) std::abort();
    return std::get<T>(v_);
  }
  std::variant<Status, T> v_;
};

}  // namespace lockstep

#define LOCKSTEP_CONCAT_INNER_(a, b) a##b
#define LOCKSTEP_CONCAT_(a, b) LOCKSTEP_CONCAT_INNER_(a, b)

// Returns from the current function if `expr` yields a non-OK Status.
#define LOCKSTEP_RETURN_IF_ERROR(expr)                   \
  do {                                                   \
    ::lockstep::Status lockstep_status_ = (expr);        \
    if (!lockstep_status_.ok()) return lockstep_status_; \
  } while (0)

// `lhs = value of expr`, or returns its error Status.
#define LOCKSTEP_ASSIGN_OR_RETURN(lhs, expr)                                 \
  LOCKSTEP_ASSIGN_OR_RETURN_IMPL_(LOCKSTEP_CONCAT_(lockstep_sor_, __LINE__), \
                                  lhs, expr)
#define LOCKSTEP_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                    \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()

#endif  // LOCKSTEP_CORE_STATUS_H_
