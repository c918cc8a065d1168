// Test helper: assembles pickles opcode by opcode and torch.save-like .pt
// archives around them, so that tests can make any variation (and any
// corruption) of what torch writes. Header-only; tests only.
#ifndef LOCKSTEP_TESTS_FORMAT_PT_BUILDER_H_
#define LOCKSTEP_TESTS_FORMAT_PT_BUILDER_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "format/zip_builder.h"

namespace lockstep::testing {

// BINUNICODE
inline std::string PStr(const std::string& s) {
  std::string out = "X";
  PutLe(&out, s.size(), 4);
  return out + s;
}

// BININT1 / BININT2 / BININT / LONG1, as Python picks them.
inline std::string PInt(int64_t v) {
  std::string out;
  if (v >= 0 && v < 256) {
    out = "K";
    PutLe(&out, v, 1);
  } else if (v >= 0 && v < 65536) {
    out = "M";
    PutLe(&out, v, 2);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    out = "J";
    PutLe(&out, static_cast<uint32_t>(v), 4);
  } else {
    out = "\x8a\x08";
    PutLe(&out, static_cast<uint64_t>(v), 8);
  }
  return out;
}

// MARK ints... TUPLE
inline std::string PIntTuple(const std::vector<int64_t>& v) {
  std::string out = "(";
  for (int64_t x : v) out += PInt(x);
  return out + "t";
}

// GLOBAL
inline std::string PGlobal(const std::string& module, const std::string& name) {
  return "c" + module + "\n" + name + "\n";
}

struct TensorPickleSpec {
  std::string storage_class = "FloatStorage";
  std::string key = "0";
  int64_t numel = 4;
  int64_t offset = 0;
  std::vector<int64_t> shape = {4};
  std::vector<int64_t> stride = {1};
  bool requires_grad = false;
};

// What torch 1.13 pickles for a tensor (protocol 2, without the memo).
inline std::string TensorPickle(const TensorPickleSpec& s) {
  return std::string("\x80\x02") +
         PGlobal("torch._utils", "_rebuild_tensor_v2") + "((" +
         PStr("storage") + PGlobal("torch", s.storage_class) + PStr(s.key) +
         PStr("cpu") + PInt(s.numel) + "tQ" + PInt(s.offset) +
         PIntTuple(s.shape) + PIntTuple(s.stride) +
         (s.requires_grad ? "\x88" : "\x89") +
         PGlobal("collections", "OrderedDict") + ")RtR.";
}

inline ZipBuildOptions TorchZipOptions() {
  ZipBuildOptions o;
  o.align = 64;
  o.data_descriptor = true;
  return o;
}

// A .pt archive: <prefix>/data.pkl, <prefix>/data/<key>, <prefix>/version.
inline std::string BuildPt(const std::string& prefix, const std::string& pickle,
                           const std::string& storage,
                           const ZipBuildOptions& o = TorchZipOptions(),
                           const std::string& key = "0") {
  return BuildZip({{prefix + "/data.pkl", pickle},
                   {prefix + "/data/" + key, storage},
                   {prefix + "/version", "3\n"}},
                  o);
}

// `n` little-endian float32 values 1, 2, 3, ...
inline std::string FloatBytes(int n) {
  std::string out(static_cast<size_t>(n) * 4, '\0');
  for (int i = 0; i < n; ++i) {
    float f = static_cast<float>(i + 1);
    std::memcpy(&out[static_cast<size_t>(i) * 4], &f, 4);
  }
  return out;
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_FORMAT_PT_BUILDER_H_
