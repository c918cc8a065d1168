#include "numerics/kernel_util.h"

#include <cstdint>

#include "lockstep/core/check.h"
#include "lockstep/numerics/cpu_features.h"
#include "lockstep/numerics/half.h"

namespace lockstep::internal {
namespace {

template <typename From, typename To>
void Convert(const void* data, size_t begin, size_t n, To* out) {
  const From* in = static_cast<const From*>(data) + begin;
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<To>(in[i]);
}

}  // namespace

Lane LaneOf(DType t) {
  switch (t) {
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kFloat32:
      return Lane::kFloat;
    default:
      return Lane::kDouble;
  }
}

Lane PairLane(DType a, DType b) {
  return LaneOf(a) == Lane::kFloat && LaneOf(b) == Lane::kFloat ? Lane::kFloat
                                                                : Lane::kDouble;
}

const float* LoadFloats(DType t, const void* data, size_t begin, size_t n,
                        float* buf) {
  const uint16_t* h = static_cast<const uint16_t*>(data) + begin;
  switch (t) {
    case DType::kFloat32:
      return static_cast<const float*>(data) + begin;
    case DType::kFloat16:
      HalfToFloat(h, buf, n);
      return buf;
    case DType::kBFloat16:
      BFloat16ToFloat(h, buf, n);
      return buf;
    default:
      LOCKSTEP_CHECK(false && "LoadFloats: not a float-lane dtype");
  }
  return nullptr;
}

const double* LoadDoubles(DType t, const void* data, size_t begin, size_t n,
                          double* buf) {
  switch (t) {
    case DType::kFloat64:
      return static_cast<const double*>(data) + begin;
    case DType::kFloat32:
      Convert<float>(data, begin, n, buf);
      break;
    case DType::kBool: {
      // Any non-zero byte is true (reading a byte other than 0/1 as bool
      // would be undefined).
      const uint8_t* in = static_cast<const uint8_t*>(data) + begin;
      for (size_t i = 0; i < n; ++i) buf[i] = in[i] != 0 ? 1.0 : 0.0;
      break;
    }
    case DType::kUInt8:
      Convert<uint8_t>(data, begin, n, buf);
      break;
    case DType::kInt8:
      Convert<int8_t>(data, begin, n, buf);
      break;
    case DType::kInt16:
      Convert<int16_t>(data, begin, n, buf);
      break;
    case DType::kUInt16:
      Convert<uint16_t>(data, begin, n, buf);
      break;
    case DType::kInt32:
      Convert<int32_t>(data, begin, n, buf);
      break;
    case DType::kUInt32:
      Convert<uint32_t>(data, begin, n, buf);
      break;
    case DType::kInt64:
      Convert<int64_t>(data, begin, n, buf);
      break;
    case DType::kUInt64:
      Convert<uint64_t>(data, begin, n, buf);
      break;
    case DType::kFloat16:
    case DType::kBFloat16: {
      // Rare (a half tensor against a double or integer one): go via float.
      const uint16_t* h = static_cast<const uint16_t*>(data) + begin;
      for (size_t i = 0; i < n; ++i) {
        buf[i] =
            t == DType::kFloat16 ? HalfToFloat(h[i]) : BFloat16ToFloat(h[i]);
      }
      break;
    }
  }
  return buf;
}

bool UseAvx2() { return CpuLevelActive(CpuLevel::kAvx2); }

}  // namespace lockstep::internal
