// Reading .npy data into Tensors (zero-copy where possible) and writing
// Tensors as numpy.save does. The header is parsed in npy_header.cc.
#include "lockstep/format/npy.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "format/str_cat.h"
#include "lockstep/core/check.h"
#include "lockstep/core/file.h"

namespace lockstep {
namespace {

constexpr size_t kMaxDims = 64;  // the header parser's limit

void ByteSwapElements(std::string* data, size_t es) {
  for (size_t i = 0; i + es <= data->size(); i += es) {
    std::reverse(data->begin() + static_cast<std::ptrdiff_t>(i),
                 data->begin() + static_cast<std::ptrdiff_t>(i + es));
  }
}

// Reorders Fortran-order (first index fastest) elements into C order.
template <size_t kSize>
std::string FortranToC(const std::string& src,
                       const std::vector<int64_t>& shape) {
  std::string out(src.size(), '\0');
  size_t n = shape.size();
  LOCKSTEP_CHECK(n <= kMaxDims);
  std::array<size_t, kMaxDims> stride{};  // Fortran strides, in elements
  std::array<int64_t, kMaxDims> idx{};
  stride[0] = 1;
  for (size_t k = 1; k < n; ++k) {
    stride[k] = stride[k - 1] * static_cast<size_t>(shape[k - 1]);
  }
  size_t in = 0;
  size_t numel = src.size() / kSize;
  for (size_t o = 0; o < numel; ++o) {
    std::memcpy(&out[o * kSize], &src[in * kSize], kSize);
    for (size_t k = n; k-- > 0;) {  // odometer, last index fastest
      if (++idx[k] < shape[k]) {
        in += stride[k];
        break;
      }
      in -= stride[k] * static_cast<size_t>(shape[k] - 1);
      idx[k] = 0;
    }
  }
  return out;
}

std::string FortranToC(const std::string& src,
                       const std::vector<int64_t>& shape, size_t es) {
  switch (es) {
    case 1:
      return FortranToC<1>(src, shape);
    case 2:
      return FortranToC<2>(src, shape);
    case 4:
      return FortranToC<4>(src, shape);
    default:
      return FortranToC<8>(src, shape);
  }
}

// Python repr of a shape tuple: "()", "(3,)", "(3, 4)".
std::string ShapeTupleRepr(const std::vector<int64_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + (shape.size() == 1 ? ",)" : ")");
}

// numpy's _write_array_header + _wrap_header.
std::string EncodeNpyHeader(std::string_view descr,
                            const std::vector<int64_t>& shape) {
  std::string dict = StrCat(
      "{'descr': '", descr,
      "', 'fortran_order': False, 'shape': ", ShapeTupleRepr(shape), ", }");
  constexpr size_t kGrowthAxisMaxDigits = 21;
  if (!shape.empty()) {
    size_t digits = std::to_string(shape[0]).size();
    if (digits < kGrowthAxisMaxDigits)
      dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }
  size_t hlen = dict.size() + 1;  // + '\n'
  int major = 1;
  size_t len_bytes = 2;
  size_t pad = kNpyAlign - (8 + len_bytes + hlen) % kNpyAlign;
  if (hlen + pad > 65535) {
    major = 2;
    len_bytes = 4;
    pad = kNpyAlign - (8 + len_bytes + hlen) % kNpyAlign;
  }
  std::string out(kNpyMagic);
  out += static_cast<char>(major);
  out += '\0';
  uint32_t total = static_cast<uint32_t>(hlen + pad);
  for (size_t i = 0; i < len_bytes; ++i)
    out += static_cast<char>((total >> (8 * i)) & 0xff);
  out += dict;
  out.append(pad, ' ');
  out += '\n';
  return out;
}

void AppendBFloat16AsFloat32(const Tensor& t, std::string* out) {
  const uint16_t* src = t.data_as<uint16_t>();
  size_t n = static_cast<size_t>(t.numel());
  size_t at = out->size();
  out->resize(at + 4 * n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits = static_cast<uint32_t>(src[i]) << 16;  // exact
    std::memcpy(&(*out)[at + 4 * i], &bits, 4);
  }
}

}  // namespace

StatusOr<Tensor> ReadNpyFromBuffer(std::string_view bytes,
                                   std::string_view subject,
                                   std::shared_ptr<const void> owner) {
  LOCKSTEP_ASSIGN_OR_RETURN(NpyHeader h, ParseNpyHeader(bytes, subject));
  const char* p = bytes.data() + h.data_offset;
  size_t es = DTypeSize(h.dtype);
  bool aligned = reinterpret_cast<uintptr_t>(p) % es == 0;
  if (owner && aligned && !h.big_endian && !h.fortran_order) {
    return Tensor(h.dtype, std::move(h.shape),
                  reinterpret_cast<const std::byte*>(p), std::move(owner));
  }
  std::string data(p, h.data_bytes);
  if (h.big_endian) ByteSwapElements(&data, es);
  if (h.fortran_order && h.shape.size() > 1)
    data = FortranToC(data, h.shape, es);
  return Tensor::FromBytes(h.dtype, std::move(h.shape), std::move(data));
}

StatusOr<Tensor> ReadNpy(const std::string& path) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file,
                            MappedFile::Open(path));
  std::string_view view = file->view();
  StatusOr<Tensor> t = ReadNpyFromBuffer(view, path, file);
  LOCKSTEP_RETURN_IF_ERROR(file->CheckIntact());
  return t;
}

std::string NpyDescr(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return "|b1";
    case DType::kUInt8:
      return "|u1";
    case DType::kInt8:
      return "|i1";
    case DType::kInt16:
      return "<i2";
    case DType::kUInt16:
      return "<u2";
    case DType::kInt32:
      return "<i4";
    case DType::kUInt32:
      return "<u4";
    case DType::kInt64:
      return "<i8";
    case DType::kUInt64:
      return "<u8";
    case DType::kFloat16:
      return "<f2";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kFloat32:
      return "<f4";
    case DType::kFloat64:
      return "<f8";
  }
  return "<f4";
}

bool NpyWidensBFloat16(const Tensor& t, const NpyWriteOptions& options) {
  return t.dtype() == DType::kBFloat16 &&
         options.bfloat16 == NpyBFloat16::kWidenToFloat32;
}

std::string EncodeNpyHeaderOf(const Tensor& t, const NpyWriteOptions& options) {
  return EncodeNpyHeader(
      NpyWidensBFloat16(t, options) ? "<f4" : NpyDescr(t.dtype()), t.shape());
}

std::string EncodeNpy(const Tensor& t, const NpyWriteOptions& options) {
  std::string out = EncodeNpyHeaderOf(t, options);
  if (NpyWidensBFloat16(t, options)) {
    out.reserve(out.size() + 2 * t.nbytes());
    AppendBFloat16AsFloat32(t, &out);
  } else if (t.nbytes() > 0) {
    out.append(reinterpret_cast<const char*>(t.data()), t.nbytes());
  }
  return out;
}

Status WriteNpy(const std::string& path, const Tensor& t,
                const NpyWriteOptions& options) {
  std::string bytes = EncodeNpy(t, options);
  return options.atomic ? WriteFileAtomic(path, bytes)
                        : WriteFileDirect(path, bytes);
}

}  // namespace lockstep
