// Corrupt, truncated and unexpected .pt files: every one gives an error
// Status that names the file and the problem, and none crashes.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "format/pt_builder.h"
#include "lockstep/core/file.h"
#include "lockstep/format/pt_reader.h"
#include "lockstep/format/tensor.h"

namespace lockstep {
namespace {

using testing::BuildPt;
using testing::BuildZip;
using testing::FloatBytes;
using testing::PGlobal;
using testing::TensorPickle;
using testing::TensorPickleSpec;

const std::string kPtDir = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/pt/";
const std::string kToyPt =
    std::string(LOCKSTEP_FIXTURES_DIR) +
    "/msprobe/toy/dumpA/out/step0/proc16954/"
    "dump_tensor_data/Functional.linear.0.forward.input.0.pt";

std::string Slurp(const std::string& path) {
  auto s = ReadFileToString(path);
  return s.ok() ? *s : std::string();
}

// Reads `bytes` as "x.pt" and expects an error of `code` whose message
// contains `part` and begins with the file name.
void ExpectError(const std::string& bytes, StatusCode code,
                 const std::string& part, const PtReadOptions& o = {}) {
  auto t = ReadPtTensorFromBuffer(bytes, "x.pt", o);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), code) << t.status().ToString();
  EXPECT_NE(t.status().message().find(part), std::string::npos)
      << t.status().ToString();
  EXPECT_EQ(t.status().message().rfind("x.pt", 0), 0u) << t.status().ToString();
}

std::string Pt(const TensorPickleSpec& spec, const std::string& storage) {
  return BuildPt("x", TensorPickle(spec), storage);
}

std::vector<std::string> SampleFiles() {
  std::vector<std::string> files;
  for (const char* stem : {"float32", "proto4", "deflated", "byteorder_big",
                           "parameter", "transposed"}) {
    files.push_back(Slurp(kPtDir + stem + ".pt"));
  }
  if (PathExists(kToyPt)) files.push_back(Slurp(kToyPt));
  return files;
}

TEST(PtCorruptionTest, TruncatedAtEvery37thByte) {
  for (const std::string& file : SampleFiles()) {
    ASSERT_FALSE(file.empty());
    ASSERT_TRUE(ReadPtTensorFromBuffer(file, "x.pt").ok());
    for (size_t n = 0; n < file.size(); n += 37) {
      auto t = ReadPtTensorFromBuffer(file.substr(0, n), "x.pt");
      ASSERT_FALSE(t.ok()) << n;
      EXPECT_EQ(t.status().message().rfind("x.pt", 0), 0u) << n;
    }
  }
}

// Every byte of each sample, flipped three ways: whatever the reader says,
// it must not crash, and an error must name the file.
TEST(PtCorruptionTest, FlippedBytesAnywhereNeverCrash) {
  for (const std::string& file : SampleFiles()) {
    for (size_t i = 0; i < file.size(); ++i) {
      for (unsigned char x : {0x01, 0x80, 0xFF}) {
        std::string b = file;
        b[i] = static_cast<char>(b[i] ^ x);
        auto t = ReadPtTensorFromBuffer(b, "x.pt");
        if (!t.ok()) {
          EXPECT_EQ(t.status().message().rfind("x.pt", 0), 0u)
              << t.status().ToString();
        }
      }
    }
  }
}

// With CRCs recorded as 0 ("not computed"), flipped pickle bytes reach the
// pickle machine and the tensor spec checks instead of failing the CRC.
TEST(PtCorruptionTest, FlippedPickleBytesWithoutCrcNeverCrash) {
  testing::ZipBuildOptions o = testing::TorchZipOptions();
  o.zero_crc = true;
  std::string pkl = TensorPickle({});
  int errors = 0;
  for (size_t i = 0; i < pkl.size(); ++i) {
    for (unsigned char x : {0x01, 0x02, 0x10, 0x80, 0xFF}) {
      std::string p = pkl;
      p[i] = static_cast<char>(p[i] ^ x);
      auto t =
          ReadPtTensorFromBuffer(BuildPt("x", p, FloatBytes(4), o), "x.pt");
      if (t.ok()) continue;
      ++errors;
      EXPECT_EQ(t.status().message().rfind("x.pt", 0), 0u);
    }
  }
  EXPECT_GT(errors, 0);
}

TEST(PtCorruptionTest, FlippedPickleByteFailsTheCrc) {
  std::string b = Slurp(kPtDir + "float32.pt");
  b[b.find("FloatStorage")] = 'G';
  ExpectError(b, StatusCode::kCorruption,
              "x.pt: zip entry 'float32/data.pkl': CRC-32 is");
}

// A flipped bit in the tensor's bytes is found by the storage's CRC-32, which
// is checked by default.
TEST(PtCorruptionTest, FlippedStorageByteFailsTheCrc) {
  std::string good = BuildPt("x", TensorPickle({}), FloatBytes(4));
  ASSERT_TRUE(ReadPtTensorFromBuffer(good, "x.pt").ok());
  std::string b = good;
  size_t at = b.find(FloatBytes(4));
  ASSERT_NE(at, std::string::npos);
  b[at + 5] = static_cast<char>(b[at + 5] ^ 0x04);
  ExpectError(b, StatusCode::kCorruption,
              "x.pt: zip entry 'x/data/0': CRC-32 is");
  PtReadOptions unchecked;
  unchecked.verify_crc = false;
  EXPECT_TRUE(ReadPtTensorFromBuffer(b, "x.pt", unchecked).ok());
}

// A storage viewed whole and without a copy may leave its check to the
// reader of its bytes; a partial view is checked at once.
TEST(PtCorruptionTest, DeferredCrcTravelsWithTheTensor) {
  std::string good = BuildPt("x", TensorPickle({}), FloatBytes(4));
  std::string bad = good;
  bad[bad.find(FloatBytes(4)) + 2] ^= 0x01;
  PtReadOptions defer;
  defer.defer_crc_from_bytes = 0;
  for (const std::string* bytes : {&good, &bad}) {
    auto owner = std::make_shared<const std::string>(*bytes);
    auto t = ReadPtTensorFromMemory(*owner, owner, "x.pt", defer);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    ASSERT_TRUE(t->unverified_crc32().has_value());
    Status s = VerifyTensorCrc32(*t, "x.pt");
    EXPECT_EQ(s.ok(), bytes == &good) << s.ToString();
    if (!s.ok()) EXPECT_NE(s.message().find("CRC-32"), std::string::npos);
  }
  // Two of the four elements: the storage is checked while reading.
  std::string part =
      BuildPt("x", TensorPickle({.offset = 1, .shape = {2}}), FloatBytes(4));
  part[part.find(FloatBytes(4)) + 2] ^= 0x01;
  auto owner = std::make_shared<const std::string>(part);
  auto t = ReadPtTensorFromMemory(*owner, owner, "x.pt", defer);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("CRC-32 is"), std::string::npos);
}

TEST(PtCorruptionTest, StorageSizeDisagreesWithPickle) {
  ExpectError(
      Pt({.numel = 5, .shape = {5}}, FloatBytes(4)), StatusCode::kCorruption,
      "x.pt: zip entry 'x/data/0': records 16 bytes, but the storage of 5 "
      "torch.float32 needs 20");
  ExpectError(Pt({.numel = 3, .shape = {3}}, FloatBytes(4)),
              StatusCode::kCorruption, "16 bytes, but the storage of 3");
  ExpectError(Pt({.numel = INT64_MAX, .shape = {1}}, FloatBytes(1)),
              StatusCode::kCorruption, "needs more");
  std::string odd = FloatBytes(4).substr(0, 15);
  ExpectError(Pt({}, odd), StatusCode::kCorruption, "15 bytes");
}

TEST(PtCorruptionTest, ShapeNeedsMoreThanTheStorage) {
  ExpectError(Pt({.numel = 4, .shape = {5}}, FloatBytes(4)),
              StatusCode::kCorruption,
              "x.pt: zip entry 'x/data.pkl': view of shape [5], stride [1] at "
              "offset 0 needs 5 elements, but the storage has 4");
  ExpectError(Pt({.offset = 1}, FloatBytes(4)), StatusCode::kCorruption,
              "at offset 1 needs 5 elements");
  ExpectError(Pt({.shape = {2, 2}, .stride = {3, 1}}, FloatBytes(4)),
              StatusCode::kCorruption, "needs 5 elements");
  ExpectError(
      Pt({.shape = {1 << 30, 4}, .stride = {INT64_MAX / 2, 1}}, FloatBytes(4)),
      StatusCode::kCorruption, "overflows");
}

TEST(PtCorruptionTest, EmptyViewNeedsNoStorage) {
  auto t = ReadPtTensorFromBuffer(
      Pt({.numel = 0, .offset = 7, .shape = {0, 1 << 30}, .stride = {9, 9}},
         ""),
      "x.pt");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->numel(), 0);
}

TEST(PtCorruptionTest, ExpandedViewsAreLimited) {
  PtReadOptions o;
  o.max_expanded_bytes = 1 << 20;
  ExpectError(
      Pt({.numel = 1, .shape = {1 << 20}, .stride = {0}}, FloatBytes(1)),
      StatusCode::kNotSupported,
      "expands a 4-byte storage to 4194304 bytes, more than the "
      "limit 1048576",
      o);
  auto t = ReadPtTensorFromBuffer(
      Pt({.numel = 1, .shape = {1000}, .stride = {0}}, FloatBytes(1)), "x.pt",
      o);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->data_as<float>()[999], 1.0f);
}

TEST(PtCorruptionTest, MissingEntries) {
  ExpectError(BuildZip({{"x/version", "3\n"}}), StatusCode::kNotFound,
              "x.pt: no zip entry 'x/data.pkl': not a torch.save file");
  ExpectError(BuildZip({}), StatusCode::kNotFound, "has no entries");
  ExpectError(BuildZip({{"x/data.pkl", TensorPickle({})}}),
              StatusCode::kNotFound,
              "x.pt: no zip entry 'x/data/0' for the tensor's storage");
  ExpectError(BuildPt("x", TensorPickle({.key = "7"}), FloatBytes(4)),
              StatusCode::kNotFound, "no zip entry 'x/data/7'");
}

TEST(PtCorruptionTest, ByteOrderMustBeLittleOrBig) {
  std::string pt = BuildZip({{"x/data.pkl", TensorPickle({})},
                             {"x/data/0", FloatBytes(4)},
                             {"x/byteorder", "middle"}});
  ExpectError(pt, StatusCode::kCorruption,
              "x.pt: zip entry 'x/byteorder': is 'middle', expected 'little' "
              "or 'big'");
}

TEST(PtCorruptionTest, ContentsThatAreNotOneDenseTensor) {
  ExpectError(Pt({.storage_class = "ComplexFloatStorage"}, FloatBytes(4)),
              StatusCode::kNotSupported,
              "storage type torch.ComplexFloatStorage is not supported");
  ExpectError(BuildPt("x", "\x80\x02}.", ""), StatusCode::kNotSupported,
              "holds dict (a state_dict or checkpoint?), not a single dense "
              "tensor");
  ExpectError(BuildPt("x", "\x80\x02].", ""), StatusCode::kNotSupported,
              "holds list of 0");
  ExpectError(
      BuildPt("x", PGlobal("torch._utils", "_rebuild_qtensor") + ")R.", ""),
      StatusCode::kNotSupported,
      "holds a call of torch._utils._rebuild_qtensor");
}

TEST(PtCorruptionTest, MalformedRebuildArguments) {
  std::string pkl = TensorPickle({});
  std::string bad_bool = pkl;
  bad_bool[bad_bool.rfind('\x89')] = 'N';
  ExpectError(BuildPt("x", bad_bool, FloatBytes(4)), StatusCode::kCorruption,
              "_rebuild_tensor_v2: requires_grad is None");
  std::string neg = pkl;  // offset BININT1 0 -> BININT -1
  size_t q = neg.find("Q");
  neg.replace(q + 1, 2, std::string("J\xff\xff\xff\xff", 5));
  ExpectError(BuildPt("x", neg, FloatBytes(4)), StatusCode::kCorruption,
              "offset, expected an int >= 0, is int -1");
  ExpectError(Pt({.shape = {4}, .stride = {1, 1}}, FloatBytes(4)),
              StatusCode::kCorruption, "size [4] and stride [1, 1] differ");
  std::string few = pkl;
  few.erase(few.rfind('\x89'), 1);
  ExpectError(BuildPt("x", few, FloatBytes(4)), StatusCode::kCorruption,
              "_rebuild_tensor_v2 has 5 arguments");
}

TEST(PtCorruptionTest, NotTorchFiles) {
  ExpectError("", StatusCode::kCorruption, "x.pt: not a ZIP archive");
  ExpectError("hello, this is text and not a zip archive at all",
              StatusCode::kCorruption, "no end of central directory");
  ExpectError(std::string("\x93NUMPY\x01\x00", 8), StatusCode::kInvalidArgument,
              "is a .npy file");
  std::string tar(600, '\0');
  tar.replace(257, 5, "ustar");
  ExpectError(tar, StatusCode::kNotSupported, "tar-based");
}

TEST(PtCorruptionTest, FileErrorsNameThePath) {
  auto t = ReadPtTensor("/nonexistent/dir/t.pt");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_NE(t.status().message().find("/nonexistent/dir/t.pt"),
            std::string::npos);
  t = ReadPtTensor(kPtDir);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace lockstep
