// EnvFingerprint: what a training run's numbers may depend on besides its
// code — seeds, deterministic flags, precision settings, LibTorch build,
// BLAS, CPU features, thread counts, environment variables, and checksums
// of the initial parameters and of the data — and its file, env.json.
// The torch layer fills it (torch/env_capture.h); compare/env_diff.h ranks
// the differences between two of them. Nothing here needs LibTorch.
//
// env.json (UTF-8 JSON, written with indent 1, keys in insertion order):
//
//   {"lockstep_env": 1,                        // format version
//    "<section>": {"<name>": str | null, ...}, // one object per section
//    ...,
//    "parameters": [{"name": str, "dtype": str, "shape": [int, ...],
//                    "crc32c": "8 lowercase hex digits"}, ...],
//    "data": [ same as parameters ]}
//
// Every field value is a string (numbers and booleans are written as text,
// "2", "true") or null (unset, e.g. an environment variable that is not
// set). A field's key is "<section>.<name>"; section names are non-empty
// and have no '.', names are non-empty. "parameters" and "data" may be
// absent (no checksums taken). Members are read in any order; unknown
// sections are kept, so newer writers' fields still diff.
// The crc32c of a tensor is CRC-32C (curve/tfrecord.h) of its elements'
// bytes in C order, little-endian as stored on x86/ARM hosts.
//
// Thread safety: a value type; the functions are pure (the file ones touch
// only their path).
#ifndef LOCKSTEP_FORMAT_ENV_FINGERPRINT_H_
#define LOCKSTEP_FORMAT_ENV_FINGERPRINT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/core/status.h"

namespace lockstep {

inline constexpr int kEnvFingerprintVersion = 1;
// The file the probe writes at the root of each dump.
inline constexpr char kEnvFileName[] = "env.json";

// One field; `value` nullopt means "unset" (JSON null).
struct EnvField {
  std::string section;
  std::string name;
  std::optional<std::string> value;

  std::string key() const { return section + "." + name; }
  bool operator==(const EnvField&) const = default;
};

// The checksum of one tensor (a parameter or a data batch).
struct EnvChecksum {
  std::string name;
  std::string dtype;  // free text, e.g. "float32"
  std::vector<int64_t> shape;
  uint32_t crc32c = 0;

  bool operator==(const EnvChecksum&) const = default;
};

struct EnvFingerprint {
  std::vector<EnvField> fields;  // in insertion order
  std::vector<EnvChecksum> parameters;
  std::vector<EnvChecksum> data;

  // Sets section.name to `value`, replacing an existing value in place.
  // REQUIRES: section non-empty without '.' and not "lockstep_env",
  // "parameters" or "data"; name non-empty.
  void Set(std::string_view section, std::string_view name,
           std::optional<std::string> value);
  // The field with key "section.name"; nullptr when absent.
  const EnvField* Find(std::string_view key) const;

  bool operator==(const EnvFingerprint&) const = default;
};

// The env.json text of `fp` (ends with '\n').
std::string EncodeEnvFingerprint(const EnvFingerprint& fp);

// Parses env.json text. `subject` names it in errors (a path). Errors are
// Corruption and name the place: "a/env.json: ['seed']['torch']: is an int,
// expected a str or null"; a missing or newer "lockstep_env" version is
// Corruption / NotSupported with a note. Never crashes on any input.
StatusOr<EnvFingerprint> DecodeEnvFingerprint(std::string_view text,
                                              std::string_view subject);

// Largest env.json read (decoding takes about 11 times the text).
inline constexpr size_t kMaxEnvJsonBytes = size_t{16} << 20;

// Reads and decodes the file at `path` (NotFound / IoError from reading).
// Only a regular file is read, never through a symbolic link or from a
// FIFO (InvalidArgument "refused: ..."); one over kMaxEnvJsonBytes is
// NotSupported before anything is decoded.
StatusOr<EnvFingerprint> ReadEnvFingerprint(const std::string& path);

// Writes EncodeEnvFingerprint(fp) to `path` atomically (temporary + rename).
Status WriteEnvFingerprintFile(const std::string& path,
                               const EnvFingerprint& fp);

}  // namespace lockstep

#endif  // LOCKSTEP_FORMAT_ENV_FINGERPRINT_H_
