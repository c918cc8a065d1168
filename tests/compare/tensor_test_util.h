// Test helpers for the tensor kernels: building tensors of any dtype from
// doubles (optionally at a misaligned address), decoding them back, random
// data per dtype, and reading raw fixture files.
#ifndef LOCKSTEP_TESTS_COMPARE_TENSOR_TEST_UTIL_H_
#define LOCKSTEP_TESTS_COMPARE_TENSOR_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "lockstep/format/tensor.h"
#include "lockstep/numerics/dtype.h"
#include "lockstep/numerics/half.h"

namespace lockstep::testing {

inline const std::vector<DType>& AllDTypes() {
  static const std::vector<DType> all = {
      DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64,
      DType::kInt8,    DType::kInt16,   DType::kInt32,    DType::kInt64,
      DType::kUInt8,   DType::kUInt16,  DType::kUInt32,   DType::kUInt64,
      DType::kBool};
  return all;
}

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// Appends v as one element of type t (rounded/truncated like a C cast;
// fp16/bf16 round to nearest even).
inline void Append(DType t, double v, std::string* out) {
  switch (t) {
    case DType::kFloat32:
      return Put(out, static_cast<float>(v));
    case DType::kFloat64:
      return Put(out, v);
    case DType::kFloat16:
      return Put(out, FloatToHalf(static_cast<float>(v)));
    case DType::kBFloat16:
      return Put(out, FloatToBFloat16(static_cast<float>(v)));
    case DType::kBool:
      return Put(out, static_cast<uint8_t>(v != 0));
    case DType::kUInt8:
      return Put(out, static_cast<uint8_t>(v));
    case DType::kInt8:
      return Put(out, static_cast<int8_t>(v));
    case DType::kInt16:
      return Put(out, static_cast<int16_t>(v));
    case DType::kUInt16:
      return Put(out, static_cast<uint16_t>(v));
    case DType::kInt32:
      return Put(out, static_cast<int32_t>(v));
    case DType::kUInt32:
      return Put(out, static_cast<uint32_t>(v));
    case DType::kInt64:
      return Put(out, static_cast<int64_t>(v));
    case DType::kUInt64:
      return Put(out, static_cast<uint64_t>(v));
  }
}

template <typename T>
double Get(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return static_cast<double>(v);
}

// Element i of a buffer of type t, as double (what numpy's astype(float64)
// gives; fp16/bf16 through the exhaustively tested converters).
inline double DecodeAt(DType t, const std::byte* data, size_t i) {
  const std::byte* p = data + i * DTypeSize(t);
  uint16_t h;
  switch (t) {
    case DType::kFloat32:
      return Get<float>(p);
    case DType::kFloat64:
      return Get<double>(p);
    case DType::kFloat16:
      std::memcpy(&h, p, 2);
      return HalfToFloat(h);
    case DType::kBFloat16:
      std::memcpy(&h, p, 2);
      return BFloat16ToFloat(h);
    case DType::kBool:
      return Get<uint8_t>(p) != 0 ? 1.0 : 0.0;
    case DType::kUInt8:
      return Get<uint8_t>(p);
    case DType::kInt8:
      return Get<int8_t>(p);
    case DType::kInt16:
      return Get<int16_t>(p);
    case DType::kUInt16:
      return Get<uint16_t>(p);
    case DType::kInt32:
      return Get<int32_t>(p);
    case DType::kUInt32:
      return Get<uint32_t>(p);
    case DType::kInt64:
      return Get<int64_t>(p);
    case DType::kUInt64:
      return Get<uint64_t>(p);
  }
  return 0;
}

// A 1-d tensor holding `values` as type t. With `misaligned`, the data starts
// one element into its buffer (so 2-, 4- and 8-byte types sit off their
// vector alignment).
inline Tensor MakeTensor(DType t, const std::vector<double>& values,
                         bool misaligned) {
  std::string bytes;
  if (misaligned) Append(t, 0, &bytes);
  for (double v : values) Append(t, v, &bytes);
  auto holder = std::make_shared<const std::string>(std::move(bytes));
  const std::byte* p = reinterpret_cast<const std::byte*>(holder->data());
  if (misaligned) p += DTypeSize(t);
  return Tensor(t, {static_cast<int64_t>(values.size())}, p, holder);
}

// The values a tensor really holds.
inline std::vector<double> Decode(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = DecodeAt(t.dtype(), t.data(), i);
  return out;
}

// Random values typical of type t (normal floats, the int range, 0/1).
inline std::vector<double> RandomValues(DType t, size_t n,
                                        std::mt19937_64* rng) {
  std::normal_distribution<double> normal(0.0, 3.0);
  std::uniform_int_distribution<int64_t> small(-100, 100),
      wide(-(1LL << 62), 1LL << 62);
  std::vector<double> v(n);
  for (double& x : v) {
    switch (t) {
      case DType::kBool:
        x = static_cast<double>((*rng)() & 1);
        break;
      case DType::kUInt8:
      case DType::kUInt16:
      case DType::kUInt32:
        x = static_cast<double>(std::abs(small(*rng)));
        break;
      case DType::kUInt64:
        x = std::ldexp(static_cast<double>(std::abs(wide(*rng))), 1);
        break;
      case DType::kInt64:
        x = static_cast<double>(wide(*rng));
        break;
      case DType::kInt8:
      case DType::kInt16:
      case DType::kInt32:
        x = static_cast<double>(small(*rng));
        break;
      default:
        x = normal(*rng);
        break;
    }
  }
  return v;
}

// Makes `a` and its companion `b` for pair tests: mostly b = a * (1 + d)
// with |d| < 1% (so relative errors straddle 0.001 and 0.005), and some
// exact copies, b == 0 under a random a, both zero, and b == 0 under a tiny
// a (where the eps added at b == 0 decides the relative error).
inline void MakePair(const std::vector<double>& random, std::mt19937_64* rng,
                     std::vector<double>* a, std::vector<double>* b) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  *a = random;
  b->resize(a->size());
  for (size_t i = 0; i < a->size(); ++i) {
    double r = u(*rng), x = (*a)[i];
    if (r < 0.03) {
      (*b)[i] = 0;
    } else if (r < 0.06) {
      (*a)[i] = (*b)[i] = 0;
    } else if (r < 0.08) {
      (*a)[i] = x * 1e-10;
      (*b)[i] = 0;
    } else if (r < 0.12) {
      (*b)[i] = x;
    } else {
      (*b)[i] = x * (1 + (u(*rng) - 0.5) * 0.02) + (u(*rng) < 0.5 ? 1 : 0);
    }
  }
}

// The whole content of a binary file.
inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_COMPARE_TENSOR_TEST_UTIL_H_
