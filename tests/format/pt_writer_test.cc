#include "lockstep/format/pt_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "lockstep/core/file.h"
#include "lockstep/format/crc32.h"
#include "lockstep/format/pt_reader.h"
#include "lockstep/format/tensor_file.h"
#include "lockstep/format/zip.h"

namespace lockstep {
namespace {

const std::string kPtDir = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/pt";

const DType kPtDTypes[] = {
    DType::kBool,    DType::kUInt8,   DType::kInt8,    DType::kInt16,
    DType::kInt32,   DType::kInt64,   DType::kFloat16, DType::kBFloat16,
    DType::kFloat32, DType::kFloat64,
};

// A tensor of `shape` whose bytes are a pattern (valid for bool: 0 or 1).
Tensor Pattern(DType dtype, std::vector<int64_t> shape) {
  size_t n = static_cast<size_t>(NumElements(shape)) * DTypeSize(dtype);
  std::string bytes(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    bytes[i] = dtype == DType::kBool ? static_cast<char>(i % 3 == 0)
                                     : static_cast<char>(i * 37 + 11);
  }
  return Tensor::FromBytes(dtype, std::move(shape), std::move(bytes));
}

std::string BytesOf(const Tensor& t) {
  return std::string(reinterpret_cast<const char*>(t.data()), t.nbytes());
}

void ExpectSameTensor(const Tensor& want, const Tensor& got,
                      const std::string& what) {
  EXPECT_EQ(got.dtype(), want.dtype()) << what;
  EXPECT_EQ(got.shape(), want.shape()) << what;
  EXPECT_EQ(BytesOf(got), BytesOf(want)) << what;
}

std::string Slurp(const std::string& path) {
  auto s = ReadFileToString(path);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : "";
}

// Every record: stored, named <stem>/..., data 64-byte aligned, CRC right.
void ExpectTorchLayout(const std::string& bytes, const std::string& stem) {
  auto zip = ZipReader::Open(bytes, stem + ".pt");
  ASSERT_TRUE(zip.ok()) << zip.status().ToString();
  std::vector<std::string> names;
  for (const ZipEntry& e : zip->entries()) {
    names.push_back(e.name);
    EXPECT_EQ(e.method, kZipStored) << e.name;
    EXPECT_EQ(e.data_offset % 64, 0u) << e.name;
    std::string scratch;
    auto data = zip->Data(e, &scratch);
    ASSERT_TRUE(data.ok()) << data.status().ToString();
    EXPECT_TRUE(zip->VerifyCrc(e, *data).ok()) << e.name;
    EXPECT_EQ(e.crc32, Crc32(*data)) << e.name;  // computed, not skipped
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{stem + "/data.pkl", stem + "/data/0",
                                      stem + "/version"}));
  const ZipEntry* version = zip->Find(stem + "/version");
  ASSERT_NE(version, nullptr);
  std::string scratch;
  EXPECT_EQ(*zip->Data(*version, &scratch), "3\n");
}

TEST(PtWriterTest, RoundTripsEveryDTypeAndShape) {
  const std::vector<std::vector<int64_t>> shapes = {
      {}, {0}, {1}, {7}, {3, 4}, {2, 0, 3}, {2, 3, 1, 5}, {300}, {70000}};
  for (DType d : kPtDTypes) {
    for (const auto& shape : shapes) {
      Tensor t = Pattern(d, shape);
      std::string what =
          std::string(TorchDTypeName(d)) + " " + ShapeToString(shape);
      auto bytes = EncodePt(t, "Functional.linear.0.forward.input.0");
      ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
      ExpectTorchLayout(*bytes, "Functional.linear.0.forward.input.0");
      auto back = ReadPtTensorFromBuffer(*bytes, what);
      ASSERT_TRUE(back.ok()) << what << ": " << back.status().ToString();
      ExpectSameTensor(t, *back, what);
    }
  }
}

// An empty dim larger than 2^31 makes the pickle write its int as LONG1.
TEST(PtWriterTest, HugeEmptyShapeUsesLongInts) {
  Tensor t = Pattern(DType::kFloat32, {0, int64_t{3} << 31, 70000, 300});
  auto bytes = EncodePt(t, "x");
  ASSERT_TRUE(bytes.ok());
  auto back = ReadPtTensorFromBuffer(*bytes, "x.pt");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->shape(), t.shape());
  EXPECT_NE(bytes->find("\x8a\x05", 0, 2), std::string::npos);  // LONG1 5 B
}

// The files torch 1.13's torch.save wrote for contiguous tensors
// (tests/data/pt/make_pt.py): encoding what they hold gives them back,
// byte for byte.
TEST(PtWriterTest, ByteIdenticalToTorchSave) {
  const char* kCases[] = {
      "float32",   "float64", "float16",     "bfloat16",      "int64",
      "int32",     "int16",   "int8",        "uint8",         "bool",
      "scalar_0d", "empty",   "empty_2x0x3", "msprobe_style", "randn_1000"};
  for (const char* name : kCases) {
    std::string path = kPtDir + "/" + name + ".pt";
    std::string want = Slurp(path);
    auto t = ReadPtTensor(path);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    auto got = EncodePt(*t, name);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_EQ(got->size(), want.size()) << name;
    size_t i = 0;
    while (i < want.size() && (*got)[i] == want[i]) ++i;
    EXPECT_EQ(i, want.size()) << name << ": first different byte at " << i;
  }
}

TEST(PtWriterTest, Zip64RecordsReadBack) {
  Tensor t = Pattern(DType::kFloat64, {5, 9});
  PtWriteOptions o;
  o.zip64_from_bytes = 64;  // data/0 (360 B) and the offsets after it
  auto bytes = EncodePt(t, "z", o);
  ASSERT_TRUE(bytes.ok());
  auto plain = EncodePt(t, "z");
  EXPECT_GT(bytes->size(), plain->size());  // the ZIP64 fields are there
  ExpectTorchLayout(*bytes, "z");
  auto back = ReadPtTensorFromBuffer(*bytes, "z.pt");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameTensor(t, *back, "zip64");
}

TEST(PtWriterTest, UnsignedWideTypesAreNotSupported) {
  for (DType d : {DType::kUInt16, DType::kUInt32, DType::kUInt64}) {
    EXPECT_FALSE(PtSupportsDType(d));
    auto bytes = EncodePt(Pattern(d, {2}), "u");
    ASSERT_FALSE(bytes.ok());
    EXPECT_EQ(bytes.status().code(), StatusCode::kNotSupported);
    EXPECT_NE(bytes.status().message().find(".npy"), std::string::npos);
  }
  for (DType d : kPtDTypes) EXPECT_TRUE(PtSupportsDType(d));
}

TEST(PtWriterTest, ArchiveNameIsTheStemAsTorchNamesIt) {
  EXPECT_EQ(PtArchiveName("/d/Functional.linear.0.forward.input.0.pt"),
            "Functional.linear.0.forward.input.0");
  EXPECT_EQ(PtArchiveName("a.b.pt"), "a.b");
  EXPECT_EQ(PtArchiveName("dir.x/noext"), "noext");
  EXPECT_EQ(PtArchiveName("d/.pt"), "archive");
  EXPECT_EQ(PtArchiveName(""), "archive");
}

TEST(PtWriterTest, WritePtFileReadsBackByExtension) {
  std::string dir =
      ::testing::TempDir() + "/pt_writer_" + std::to_string(::getpid());
  ASSERT_TRUE(CreateDirs(dir).ok());
  Tensor t = Pattern(DType::kBFloat16, {4, 6});
  for (bool atomic : {true, false}) {
    std::string path = dir + "/Tensor.add.1.forward.output.0.pt";
    std::filesystem::remove(path);
    PtWriteOptions o;
    o.atomic = atomic;
    ASSERT_TRUE(WritePt(path, t, o).ok());
    auto back = ReadTensorFile(path);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    ExpectSameTensor(t, *back, path);
    EXPECT_EQ(Slurp(path), *EncodePt(t, "Tensor.add.1.forward.output.0"));
  }
  EXPECT_FALSE(WritePt(dir + "/no/such/dir/x.pt", t).ok());
  std::filesystem::remove_all(dir);
}

TEST(PtWriterTest, OverlongArchiveNameIsRefused) {
  auto bytes = EncodePt(Pattern(DType::kInt8, {1}), std::string(40000, 'a'));
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lockstep
