// A small versioned text format for saved states: a first line
// "<magic> <version>", then one "key value" line per field. Doubles are
// written in C99 hex-float form so they round-trip exactly. Used by
// LrScheduleState and LossScaleState.
// Errors name `subject` (e.g. "lr-schedule state") and the key or line.
// Thread safety: values; a KeyValueReader is used by one thread.
#ifndef LOCKSTEP_NUMERICS_KV_TEXT_H_
#define LOCKSTEP_NUMERICS_KV_TEXT_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"

namespace lockstep::internal {

// "%a" of d, e.g. "0x1.999999999999ap-4".
std::string HexDouble(double d);

// Appends "key value\n".
void PutKeyValue(std::string* out, std::string_view key,
                 std::string_view value);

using KeyValues = std::map<std::string, std::string, std::less<>>;

// Checks the first line ("<magic> <version>": Corruption "not a lockstep
// <subject>: ..." when it is not there, NotSupported naming both versions when
// the version differs) and splits the other non-empty lines into `out`.
// Corruption for a line without "key value" or a key given twice.
Status ParseKeyValueText(std::string_view text, std::string_view magic,
                         int version, std::string_view subject, KeyValues* out);

// Typed access to parsed fields; the first problem (a missing key, a value
// that does not parse) is kept in status(), later reads return 0/empty.
class KeyValueReader {
 public:
  KeyValueReader(const KeyValues& fields, std::string_view subject)
      : fields_(fields), subject_(subject) {}
  Status status() const { return status_; }

  double Double(const char* key);
  int64_t Int(const char* key);
  bool Bool(const char* key);  // "0" or "1"
  std::string Str(const char* key);
  // Comma-separated; an empty value is an empty list.
  std::vector<int64_t> IntList(const char* key);
  std::vector<double> DoubleList(const char* key);
  // Corruption naming the first key no read asked for.
  Status CheckNoUnknownKeys();

 private:
  const std::string* Get(const char* key);
  void Bad(const char* key, const std::string& value);

  const KeyValues& fields_;
  std::string subject_;
  std::set<std::string, std::less<>> read_;
  Status status_;
};

}  // namespace lockstep::internal

#endif  // LOCKSTEP_NUMERICS_KV_TEXT_H_
