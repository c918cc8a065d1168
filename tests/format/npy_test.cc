#include "lockstep/format/npy.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "lockstep/core/file.h"
#include "lockstep/format/json_reader.h"

namespace lockstep {
namespace {

const std::string kNpyDir =
    std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/npy";

std::string Slurp(const std::string& path) {
  auto s = ReadFileToString(path);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : "";
}

std::string Hex(const std::byte* p, size_t n) {
  std::string out;
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", static_cast<unsigned>(p[i]));
    out += buf;
  }
  return out;
}

std::vector<int64_t> ShapeOf(const PyValue& v) {
  std::vector<int64_t> shape;
  for (const PyValue& d : v.items()) shape.push_back(d.as_int());
  return shape;
}

// Every file make_npy.py wrote (numpy 1.24) reads back to the bytes and
// shape numpy had, and EncodeNpy reproduces numpy.save's bytes exactly.
TEST(NpyTest, ReadsEveryNumpyWrittenFile) {
  auto manifest =
      ParsePyJson(Slurp(kNpyDir + "/manifest.json"), "manifest.json");
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  ASSERT_GE(manifest->items().size(), 30u);
  for (const PyValue& m : manifest->items()) {
    std::string file = m.Find("file")->as_str();
    SCOPED_TRACE(file);
    auto t = ReadNpy(kNpyDir + "/" + file);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(TorchDTypeName(t->dtype()), "torch." + m.Find("dtype")->as_str());
    EXPECT_EQ(t->shape(), ShapeOf(*m.Find("shape")));
    EXPECT_EQ(Hex(t->data(), t->nbytes()), m.Find("data_hex")->as_str());
    if (m.Find("roundtrip")->as_bool()) {
      NpyWriteOptions opt;
      opt.bfloat16 = NpyBFloat16::kDescrBFloat16;
      EXPECT_EQ(EncodeNpy(*t, opt), Slurp(kNpyDir + "/" + file));
    }
  }
}

TEST(NpyTest, HeaderFields) {
  std::string bytes = Slurp(kNpyDir + "/f8_be_fortran.npy");
  auto h = ParseNpyHeader(bytes, "x.npy");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->major, 1);
  EXPECT_EQ(h->descr, ">f8");
  EXPECT_TRUE(h->big_endian);
  EXPECT_TRUE(h->fortran_order);
  EXPECT_EQ(h->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(h->data_offset, 128u);
  EXPECT_EQ(h->data_bytes, 48u);
  auto v3 = ParseNpyHeader(Slurp(kNpyDir + "/f4_v3.npy"), "x.npy");
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(v3->major, 3);
  EXPECT_EQ(v3->data_offset % kNpyAlign, 0u);
}

TEST(NpyTest, LittleEndianCOrderIsNotCopied) {
  auto bytes =
      std::make_shared<const std::string>(Slurp(kNpyDir + "/f4_le.npy"));
  auto t = ReadNpyFromBuffer(*bytes, "f4_le.npy", bytes);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(reinterpret_cast<const char*>(t->data()), bytes->data() + 128);
  // Without an owner the data is copied.
  auto c = ReadNpyFromBuffer(*bytes, "f4_le.npy");
  ASSERT_TRUE(c.ok());
  EXPECT_NE(reinterpret_cast<const char*>(c->data()), bytes->data() + 128);
  EXPECT_EQ(std::memcmp(c->data(), t->data(), t->nbytes()), 0);
}

TEST(NpyTest, MisalignedDataIsCopiedToAlignedMemory) {
  auto t = ReadNpy(kNpyDir + "/f8_misaligned.npy");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 8, 0u);
  EXPECT_EQ(t->data_as<double>()[0], 0.5);
}

TEST(NpyTest, BFloat16IsWidenedToFloat32ByDefault) {
  auto t = ReadNpy(kNpyDir + "/bf16_descr.npy");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->dtype(), DType::kBFloat16);
  EXPECT_EQ(EncodeNpy(*t), Slurp(kNpyDir + "/bf16_widened.npy"));
  EXPECT_EQ(NpyDescr(DType::kBFloat16), "bfloat16");
}

TEST(NpyTest, UnsupportedDtypesSayWhy) {
  auto v = ReadNpy(kNpyDir + "/v2_void.npy");
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(v.status().message().find("ml_dtypes"), std::string::npos)
      << v.status().message();
  auto c = ReadNpy(kNpyDir + "/c8_complex.npy");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(c.status().message().find("'<c8'"), std::string::npos)
      << c.status().message();
}

TEST(NpyTest, WriteThenReadEveryDtype) {
  std::string dir = std::filesystem::temp_directory_path() /
                    ("lockstep_npy_test_" + std::to_string(::getpid()));
  ASSERT_TRUE(CreateDirs(dir).ok());
  for (DType d : {DType::kBool, DType::kUInt8, DType::kInt8, DType::kInt16,
                  DType::kUInt16, DType::kInt32, DType::kUInt32, DType::kInt64,
                  DType::kUInt64, DType::kFloat16, DType::kBFloat16,
                  DType::kFloat32, DType::kFloat64}) {
    std::vector<int64_t> shape = {3, 1, 5};
    std::string bytes(15 * DTypeSize(d), '\0');
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = static_cast<char>(i * 37 % 251);
    if (d == DType::kBool) {
      for (char& b : bytes) b = static_cast<char>(b & 1);
    }
    Tensor t = Tensor::FromBytes(d, shape, bytes);
    std::string path = dir + "/t.npy";
    NpyWriteOptions opt;
    opt.bfloat16 = NpyBFloat16::kDescrBFloat16;
    ASSERT_TRUE(WriteNpy(path, t, opt).ok());
    auto back = ReadNpy(path);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(back->dtype(), d);
    EXPECT_EQ(back->shape(), shape);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(back->data()),
                          back->nbytes()),
              bytes);
    EXPECT_EQ(EncodeNpy(t, opt).size() % 64,
              bytes.size() % 64);  // data is 64-aligned
  }
  std::filesystem::remove_all(dir);
}

// ---- corruption: errors, never crashes ----

std::string WithHeader(std::string_view dict, std::string_view payload = "") {
  std::string h(dict);
  h += '\n';
  std::string out(kNpyMagic);
  out += '\x01';
  out += '\0';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h + std::string(payload);
}

Status ErrorOf(std::string_view bytes) {
  auto t = ReadNpyFromBuffer(bytes, "bad.npy");
  EXPECT_FALSE(t.ok());
  return t.status();
}

TEST(NpyCorruptionTest, EveryTruncationFails) {
  std::string good = Slurp(kNpyDir + "/f4_le.npy");
  for (size_t n = 0; n < good.size(); ++n) {
    Status s = ErrorOf(std::string_view(good).substr(0, n));
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << n;
    EXPECT_EQ(s.message().rfind("bad.npy: ", 0), 0u) << s.message();
  }
  Status s = ErrorOf(std::string_view(good).substr(0, good.size() - 1));
  EXPECT_NE(s.message().find(
                "needs 6 elements of 4 bytes, but the file has 23 bytes after "
                "its 128-byte header"),
            std::string::npos)
      << s.message();
}

TEST(NpyCorruptionTest, BadMagicAndVersion) {
  std::string good = Slurp(kNpyDir + "/f4_le.npy");
  std::string bad = good;
  bad[1] = 'X';
  EXPECT_NE(ErrorOf(bad).message().find("no \\x93NUMPY magic"),
            std::string::npos);
  bad = good;
  bad[6] = 4;
  EXPECT_EQ(ErrorOf(bad).code(), StatusCode::kNotSupported);
  bad = good;
  bad[8] = '\xff';  // header length beyond the file
  EXPECT_NE(ErrorOf(bad).message().find("truncated"), std::string::npos);
}

TEST(NpyCorruptionTest, BadHeaderDicts) {
  const char* kBad[] = {
      "{'descr': '<f4', 'fortran_order': False}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'x': 1}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (3)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': [3]}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
      "{'descr': '<f4', 'fortran_order': 1, 'shape': ()}",
      "{'descr': '<f4, 'fortran_order': False, 'shape': ()}",
      "{'descr': '<f4' 'fortran_order': False, 'shape': ()}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (1 2)}",
      "{'descr': '<f4', 'fortran_order': False, 'shape': ()} junk",
      "{'descr': '<f4', 'fortran_order': False, 'shape': "
      "(99999999999999999999,)}",
      "'descr'",
      "",
  };
  for (const char* dict : kBad) {
    Status s = ErrorOf(WithHeader(dict, std::string(64, '\0')));
    EXPECT_EQ(s.code(), StatusCode::kCorruption)
        << dict << " -> " << s.ToString();
  }
  Status s = ErrorOf(
      WithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': (3)}"));
  EXPECT_NE(s.message().find("'shape' is not a tuple of ints"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(
      ErrorOf(
          WithHeader(
              "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}"))
          .code(),
      StatusCode::kNotSupported);
}

TEST(NpyCorruptionTest, ShapeBiggerThanDataOrOverflowing) {
  Status s = ErrorOf(WithHeader(
      "{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 2), }", "x"));
  EXPECT_NE(
      s.message().find("npy shape [1000, 2] of '<f8' needs 2000 elements"),
      std::string::npos)
      << s.message();
  s =
      ErrorOf(WithHeader("{'descr': '<f8', 'fortran_order': False, 'shape': "
                         "(4611686018427387904, 4), }"));
  EXPECT_NE(s.message().find("more than 2^63 elements"), std::string::npos)
      << s.message();
  s =
      ErrorOf(WithHeader("{'descr': '<f8', 'fortran_order': False, 'shape': "
                         "(2305843009213693952,), }"));
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
}

// Issue 32: a file of shape (0, INT64_MAX, INT64_MAX) was accepted as an
// empty tensor; numpy refuses it ("array is too big").
TEST(NpyCorruptionTest, ShapeZeroInt64MaxInt64MaxIsRefused) {
  Status s =
      ErrorOf(WithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                         "(0, 9223372036854775807, 9223372036854775807), }"));
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("is too big"), std::string::npos) << s.message();
  // The dims overflow with the item size only: (0, 2^61, 2) of float64.
  s =
      ErrorOf(WithHeader("{'descr': '<f8', 'fortran_order': False, 'shape': "
                         "(0, 2305843009213693952, 2), }"));
  EXPECT_NE(s.message().find("is too big"), std::string::npos) << s.message();
  // Empty shapes that numpy makes still read.
  auto t = ReadNpyFromBuffer(
      WithHeader("{'descr': '<f4', 'fortran_order': False, 'shape': "
                 "(0, 1000000), }"),
      "ok.npy");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->numel(), 0);
  EXPECT_EQ(NumElements({0, INT64_MAX, INT64_MAX}), -1);
  EXPECT_EQ(NumElements({0, INT64_MAX}), 0);
}

TEST(NpyCorruptionTest, ExtraBytesAfterTheDataAreIgnoredAsNumpyDoes) {
  std::string good = Slurp(kNpyDir + "/f4_le.npy");
  auto t = ReadNpyFromBuffer(good + "extra", "x.npy");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->numel(), 6);
}

TEST(NpyCorruptionTest, MissingFile) {
  EXPECT_EQ(ReadNpy("/nonexistent/x.npy").status().code(),
            StatusCode::kNotFound);
}

}  // namespace
}  // namespace lockstep
