#include "lockstep/compare/tensor_compare.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "lockstep/compare/metrics.h"
#include "lockstep/compare/stream_metrics.h"
#include "lockstep/numerics/half.h"
#include "lockstep/numerics/pyfloat.h"

namespace lockstep {
namespace {

constexpr double kTinyNorm = 2.220446049250313e-16;  // np.finfo(float).eps

// Python round(x, 6), exact decimal rounding like Python's.
double Round6(double x) {
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%.6f", x);
  return std::strtod(buf, nullptr);
}

Cell Rounded(double x) {
  if (std::isnan(x)) return Cell::Str(kNanStr);
  return Cell::Num(RoundTo12Decimals(x));
}

double ElementAsDouble(const Tensor& t) {
  const std::byte* p = t.data();
  switch (t.dtype()) {
    case DType::kFloat16:
      return HalfToFloat(*reinterpret_cast<const uint16_t*>(p));
    case DType::kBFloat16:
      return BFloat16ToFloat(*reinterpret_cast<const uint16_t*>(p));
    case DType::kFloat32:
      return *reinterpret_cast<const float*>(p);
    case DType::kFloat64:
      return *reinterpret_cast<const double*>(p);
    case DType::kBool:
    case DType::kUInt8:
      return *reinterpret_cast<const uint8_t*>(p);
    case DType::kInt8:
      return *reinterpret_cast<const int8_t*>(p);
    case DType::kInt16:
      return *reinterpret_cast<const int16_t*>(p);
    case DType::kUInt16:
      return *reinterpret_cast<const uint16_t*>(p);
    case DType::kInt32:
      return *reinterpret_cast<const int32_t*>(p);
    case DType::kUInt32:
      return *reinterpret_cast<const uint32_t*>(p);
    case DType::kInt64:
      return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    case DType::kUInt64:
      return static_cast<double>(*reinterpret_cast<const uint64_t*>(p));
  }
  return 0;
}

// 0-d tensors: msprobe's chain stops before the inf/nan handling, so the two
// values are used as they are.
void CompareScalars(const Tensor& npu, const Tensor& bench, MsprobeRow* row,
                    TensorPairFacts* facts) {
  double a = ElementAsDouble(npu), b = ElementAsDouble(bench);
  double rel;
  if (RelErrDType(npu.dtype(), bench.dtype()) == DType::kFloat32) {
    float n = static_cast<float>(a), d = static_cast<float>(b);
    const float eps = 1.1920929e-07f;
    if (d == 0) {
      n += eps;
      d += eps;
    }
    rel = std::fabs((n - d) / d);
  } else {
    double n = a, d = b;
    if (d == 0) {
      n += kTinyNorm;
      d += kTinyNorm;
    }
    rel = std::fabs((n - d) / d);
  }
  double abs_err = std::fabs(a - b);
  row->metrics = {Cell::Str(kUnsupported), Cell::Str(kUnsupported),
                  Rounded(abs_err),        Rounded(rel),
                  Cell::Str(kUnsupported), Cell::Str(kUnsupported)};
  row->metric_message =
      "This is type of 0-d tensor, can not calculate 'Cosine', 'EucDist', 'One "
      "Thousandth Err "
      "Ratio' and 'Five Thousandths Err Ratio'. ";
  facts->compared = true;
  facts->max_abs_err = abs_err;
  facts->max_rel_err = rel;
  facts->target_nonfinite = std::isfinite(a) ? 0 : 1;
  facts->baseline_nonfinite = std::isfinite(b) ? 0 : 1;
}

Cell CosineCell(const PairMetrics& m, std::string* msg) {
  double na = std::sqrt(m.sum_a2), nb = std::sqrt(m.sum_b2);
  if (na <= kTinyNorm && nb <= kTinyNorm) return Cell::Num(1.0);
  if (na <= kTinyNorm) {
    *msg +=
        "Cannot compare by Cosine Similarity, All the data is Zero in npu dump "
        "data.";
    return Cell::Str(kNanStr);
  }
  if (nb <= kTinyNorm) {
    *msg +=
        "Cannot compare by Cosine Similarity, All the data is Zero in Bench "
        "dump data.";
    return Cell::Str(kNanStr);
  }
  double c = m.dot / (na * nb);
  if (std::isnan(c)) return Cell::Str(kNanStr);
  c = RoundTo12Decimals(c);
  if (c > 0.9999) c = Round6(c);
  return Cell::Num(c);
}

}  // namespace

std::vector<int64_t> Squeeze(const std::vector<int64_t>& shape) {
  std::vector<int64_t> out;
  for (int64_t d : shape) {
    if (d != 1) out.push_back(d);
  }
  return out;
}

void SetAllMetrics(MsprobeRow* row, const char* value,
                   const std::string& message) {
  for (Cell& c : row->metrics) c = Cell::Str(value);
  row->metric_message = message;
}

// The file a tensor came from, for messages.
static std::string TensorName(const Tensor& t) {
  return t.file_region() ? t.file_region()->path : std::string("tensor");
}

TensorPairFacts CompareTensorPair(const Tensor& npu, const Tensor& bench,
                                  int threads, MsprobeRow* row) {
  TensorPairFacts facts;
  if (npu.numel() == 0 || bench.numel() == 0) {
    SetAllMetrics(row, kUnsupported, "This is empty data, can not compare.");
    return facts;
  }
  std::vector<int64_t> sa = Squeeze(npu.shape()), sb = Squeeze(bench.shape());
  if (sa != sb) {
    SetAllMetrics(row, kShapeUnmatched,
                  "Shape of NPU and bench tensor do not match. Skipped.");
    facts.shape_mismatch = true;
    return facts;
  }
  bool stream = sa.size() > 0 && npu.file_region() && bench.file_region() &&
                npu.numel() >= kStreamChunkElements;
  if (!stream) {  // streaming checks the CRC-32s as it reads
    Status crc = VerifyTensorCrc32(npu, TensorName(npu));
    if (crc.ok()) crc = VerifyTensorCrc32(bench, TensorName(bench));
    if (!crc.ok()) {
      SetAllMetrics(row, kUnsupported,
                    "Dump file read failed: " + crc.message());
      facts.unreadable = true;
      return facts;
    }
  }
  if (sa.empty()) {
    CompareScalars(npu, bench, row, &facts);
    return facts;
  }
  PairMetrics m;
  if (stream) {
    StatusOr<PairMetrics> streamed = StreamPairMetrics(npu, bench, threads);
    if (!streamed.ok()) {
      SetAllMetrics(row, kUnsupported,
                    "Dump file read failed: " + streamed.status().message());
      facts.unreadable = true;
      return facts;
    }
    m = *streamed;
  } else {
    m = ComputePairMetrics(npu, bench, threads);
  }
  facts.target_nonfinite = m.nan_a + m.inf_a;
  facts.baseline_nonfinite = m.nan_b + m.inf_b;
  if (m.nonfinite_mismatch) {
    SetAllMetrics(
        row, kNA,
        "The position of inf or nan in NPU and bench Tensor do not match.");
    facts.nonfinite_mismatch = true;
    return facts;
  }
  std::string msg;
  if (npu.dtype() != bench.dtype())
    msg = "Dtype of NPU and bench tensor do not match.";
  double n = static_cast<double>(m.n);
  row->metrics = {
      CosineCell(m, &msg),
      Cell::Num(EuclideanDistance(m)),
      Rounded(m.max_abs_diff),
      Rounded(m.max_rel_err),
      Cell::Num(RoundTo12Decimals(static_cast<double>(m.rel_lt_1e3) / n)),
      Cell::Num(RoundTo12Decimals(static_cast<double>(m.rel_lt_5e3) / n))};
  row->metric_message = msg;
  facts.compared = true;
  facts.cosine = Cosine(m);
  facts.one_minus_cos = OneMinusCosine(m);
  facts.max_abs_err = m.max_abs_diff;
  facts.max_rel_err = m.max_rel_err;
  facts.one_thousandth_ratio = static_cast<double>(m.rel_lt_1e3) / n;
  facts.rel_l2_err = m.sum_b2 > 0 ? std::sqrt(m.sum_d2 / m.sum_b2)
                                  : (m.sum_d2 > 0 ? INFINITY : 0);
  return facts;
}

}  // namespace lockstep
