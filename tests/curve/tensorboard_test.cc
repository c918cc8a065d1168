#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>

#include "lockstep/core/file.h"
#include "lockstep/curve/readers.h"
#include "lockstep/curve/tb_writer.h"
#include "lockstep/curve/tfrecord.h"
#include "testing/fault_env.h"

namespace lockstep {
namespace {

// CRC-32C check values: the "123456789" check value of the CRC catalogue,
// and the iSCSI test patterns of RFC 3720 appendix B.4.
TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string inc, dec;
  for (int i = 0; i < 32; ++i) {
    inc += static_cast<char>(i);
    dec += static_cast<char>(31 - i);
  }
  EXPECT_EQ(Crc32c(inc), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(dec), 0x113FDB5Cu);
  // Continuing a CRC equals the CRC of the concatenation.
  EXPECT_EQ(Crc32c("56789", Crc32c("1234")), 0xE3069283u);
}

TEST(Crc32cTest, Mask) {
  // ((c >> 15) | (c << 17)) + 0xa282ead8, computed by hand for c = 1.
  EXPECT_EQ(MaskCrc32c(1), (1u << 17) + 0xa282ead8u);
  EXPECT_EQ(MaskCrc32c(0x8000u), 1u + 0xa282ead8u);
}

TEST(TfRecordTest, EncodeAndRead) {
  std::string rec = EncodeTfRecord("hello");
  ASSERT_EQ(rec.size(), 5 + kTfRecordHeaderBytes + kTfRecordFooterBytes);
  std::string_view payload;
  size_t next = 0;
  ASSERT_EQ(ReadTfRecord(rec, 0, &payload, &next), TfRecordResult::kOk);
  EXPECT_EQ(payload, "hello");
  EXPECT_EQ(next, rec.size());
  EXPECT_EQ(ReadTfRecord(rec, next, &payload, &next), TfRecordResult::kEnd);
  std::string bad = rec;
  bad[13] ^= 1;
  EXPECT_EQ(ReadTfRecord(bad, 0, &payload, &next), TfRecordResult::kBadDataCrc);
  bad = rec;
  bad[0] ^= 1;
  EXPECT_EQ(ReadTfRecord(bad, 0, &payload, &next),
            TfRecordResult::kBadLengthCrc);
  for (size_t n = 0; n < rec.size(); ++n) {
    EXPECT_EQ(ReadTfRecord(rec.substr(0, n), 0, &payload, &next),
              n == 0 ? TfRecordResult::kEnd : TfRecordResult::kTruncated)
        << n;
  }
}

class TbFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lockstep_tb_" + std::to_string(getpid()));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A file_version event and then `n` points of "loss" and "lr".
  std::string WriteSmall(int n) {
    auto w = TensorBoardWriter::Create(dir_.string() + "/");
    EXPECT_TRUE(w.ok()) << w.status().ToString();
    for (int i = 0; i < n; ++i) {
      EXPECT_TRUE((*w)->AddScalar("train/loss", i * 10, 1.0 / (i + 1)).ok());
      EXPECT_TRUE((*w)->AddScalar("lr", i * 10, 0.5).ok());
    }
    EXPECT_TRUE((*w)->Flush().ok());
    path_ = (*w)->path();
    auto bytes = ReadFileToString(path_);
    return bytes.ok() ? *bytes : "";
  }

  std::filesystem::path dir_;
  std::string path_;
};

TEST_F(TbFileTest, WriteThenReadBackExactly) {
  std::filesystem::create_directories(dir_);  // an existing directory
  auto w = TensorBoardWriter::Create(dir_.string());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const double kNan = std::numeric_limits<double>::quiet_NaN();
  const double values[] = {
      2.5, -0.125, 1e-30, 65504.0, std::numeric_limits<double>::infinity(),
      kNan};
  const int64_t steps[] = {0, 1, 1, 1000000000000LL, -3, 7};
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE((*w)->AddScalar("loss", steps[i], values[i]).ok());
  }
  ASSERT_TRUE((*w)->AddScalar("eval/loss", 5, 0.75).ok());
  ASSERT_TRUE((*w)->Flush().ok());
  std::string name = std::filesystem::path((*w)->path()).filename();
  EXPECT_EQ(name.rfind("events.out.tfevents.", 0), 0u) << name;
  auto log = ReadCurveLog((*w)->path());
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(log->format, CurveFormat::kTensorBoard);
  EXPECT_EQ(log->lines, 8);  // file_version + 7 scalars
  EXPECT_EQ(log->malformed, 0);
  EXPECT_TRUE(log->warnings.empty());
  const auto& pts = log->metrics.at("loss").points;
  ASSERT_EQ(pts.size(), 6u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(pts[i].step, steps[i]);
    EXPECT_EQ(pts[i].value, static_cast<double>(static_cast<float>(values[i])));
  }
  EXPECT_TRUE(std::isnan(pts[5].value));
  ASSERT_EQ(log->metrics.at("eval_loss").points.size(), 1u);
  EXPECT_EQ(log->metrics.at("eval_loss").points[0].value, 0.75);
}

TEST_F(TbFileTest, DetectedByContentWhateverTheName) {
  std::string bytes = WriteSmall(2);
  auto log = ReadCurveLogFromString(bytes, "renamed.bin");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(log->metrics.at("loss").points.size(), 2u);
}

TEST_F(TbFileTest, TruncationAtEveryByteIsReportedNeverFatal) {
  std::string bytes = WriteSmall(3);
  // Record boundaries: a prefix ending on one is an intact shorter file.
  std::vector<size_t> ends;
  for (size_t off = 0; off < bytes.size();) {
    std::string_view payload;
    size_t next;
    ASSERT_EQ(ReadTfRecord(bytes, off, &payload, &next), TfRecordResult::kOk);
    ends.push_back(next);
    off = next;
  }
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto log =
        ReadCurveLogFromString(bytes.substr(0, n), "events.out.tfevents.1.h");
    bool boundary = std::find(ends.begin(), ends.end(), n) != ends.end();
    if (n < ends[1]) {  // not even one scalar
      ASSERT_FALSE(log.ok()) << n;
      if (n > 0 && !boundary) {
        EXPECT_NE(log.status().message().find("truncated at byte"),
                  std::string::npos)
            << log.status().message();
      }
      continue;
    }
    ASSERT_TRUE(log.ok()) << n << ": " << log.status().ToString();
    if (boundary) {
      EXPECT_TRUE(log->warnings.empty()) << n;
    } else {
      ASSERT_EQ(log->warnings.size(), 1u) << n;
      EXPECT_EQ(log->warnings[0].rfind("truncated at byte", 0), 0u);
    }
  }
}

TEST_F(TbFileTest, BadCrcSkipsTheRecordOrStops) {
  std::string bytes = WriteSmall(3);
  std::string_view payload;
  size_t r1 = 0, r2 = 0, r3 = 0;
  ASSERT_EQ(ReadTfRecord(bytes, 0, &payload, &r1), TfRecordResult::kOk);
  ASSERT_EQ(ReadTfRecord(bytes, r1, &payload, &r2), TfRecordResult::kOk);
  ASSERT_EQ(ReadTfRecord(bytes, r2, &payload, &r3), TfRecordResult::kOk);
  std::string data_bad = bytes;
  data_bad[r2 + kTfRecordHeaderBytes + 2] ^= 0x40;  // record 2's data
  auto log = ReadCurveLogFromString(data_bad, "events.out.tfevents.x");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(log->malformed, 1);
  ASSERT_EQ(log->warnings.size(), 1u);
  EXPECT_EQ(log->warnings[0].rfind("bad CRC at record 2", 0), 0u);
  EXPECT_EQ(log->metrics.at("loss").points.size(), 3u);
  EXPECT_EQ(log->metrics.at("learning_rate").points.size(), 2u);
  std::string len_bad = bytes;
  len_bad[r3] ^= 0x01;  // record 3's length
  log = ReadCurveLogFromString(len_bad, "events.out.tfevents.x");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  ASSERT_EQ(log->warnings.size(), 1u);
  EXPECT_EQ(log->warnings[0].rfind("bad CRC at record 3", 0), 0u);
  EXPECT_EQ(log->metrics.at("loss").points.size(), 1u);
}

// Issue 32: 4,000,000 records with a bad data CRC printed 4,000,000
// warnings. The first few are said, the rest summed up in one line.
TEST_F(TbFileTest, FourMillionBadCrcRecordsAreSummarized) {
  std::string good = WriteSmall(1);
  std::string bad = EncodeTfRecord("x");
  bad[kTfRecordHeaderBytes] ^= 0x01;  // the data, not its length
  std::string bytes = good;
  bytes.reserve(good.size() + bad.size() * 4000000);
  for (int i = 0; i < 4000000; ++i) bytes += bad;
  auto log = ReadCurveLogFromString(bytes, "events.out.tfevents.x");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(log->malformed, 4000000);
  ASSERT_EQ(log->warnings.size(), 6u);
  EXPECT_EQ(log->warnings[0].rfind("bad CRC at record 3 (data", 0), 0u)
      << log->warnings[0];
  EXPECT_EQ(log->warnings[5],
            "bad CRC in 3999995 more records (data); skipped (4000000 in all)");
  EXPECT_EQ(log->metrics.at("loss").points.size(), 1u);
}

// Hand-built protobuf, so that tensor-encoded scalars (TF2's
// tf.summary.scalar) are covered without TensorFlow.
std::string Varint(uint64_t v) {
  std::string s;
  for (; v >= 0x80; v >>= 7) s += static_cast<char>((v & 0x7f) | 0x80);
  return s + static_cast<char>(v);
}
std::string Len(int field, const std::string& b) {
  return Varint(field << 3 | 2) + Varint(b.size()) + b;
}
template <typename T>
std::string Raw(T v) {
  std::string s(sizeof v, '\0');
  std::memcpy(s.data(), &v, sizeof v);
  return s;
}
std::string ScalarEvent(int64_t step, const std::string& value) {
  std::string summary = Len(1, value);
  return Varint(1 << 3 | 1) + Raw(1.7e9) + Varint(2 << 3) + Varint(step) +
         Len(5, summary);
}

TEST(TfEventsTest, TensorEncodedScalars) {
  std::string tag = Len(1, "loss");
  std::string f32 = Varint(1 << 3) + Varint(1) + Len(2, "") +
                    Len(4, Raw(1.5f));  // DT_FLOAT, tensor_content
  std::string f64 = Varint(1 << 3) + Varint(2) + Len(6, Raw(2.25));  // packed
  std::string fval = Varint(1 << 3) + Varint(1) + Varint(5 << 3 | 5) +
                     Raw(3.5f);  // unpacked float_val
  std::string vec = Varint(1 << 3) + Varint(1) + Len(5, Raw(1.f) + Raw(2.f));
  std::string str = Varint(1 << 3) + Varint(7) + Len(8, "text");
  std::string file = EncodeTfRecord(ScalarEvent(1, tag + Len(8, f32))) +
                     EncodeTfRecord(ScalarEvent(2, tag + Len(8, f64))) +
                     EncodeTfRecord(ScalarEvent(3, tag + Len(8, fval))) +
                     EncodeTfRecord(ScalarEvent(4, tag + Len(8, vec))) +
                     EncodeTfRecord(ScalarEvent(5, tag + Len(8, str))) +
                     EncodeTfRecord("\xff\xff garbage");
  auto log = ReadCurveLogFromString(file, "events.out.tfevents.t");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  const auto& pts = log->metrics.at("loss").points;
  ASSERT_EQ(pts.size(), 3u);  // the vector and the string are not scalars
  EXPECT_EQ(pts[0].value, 1.5);
  EXPECT_EQ(pts[1].value, 2.25);
  EXPECT_EQ(pts[2].value, 3.5);
  EXPECT_EQ(pts[2].step, 3);
  EXPECT_EQ(log->malformed, 1);  // the garbage record
}

// Seed files written by a separate Python encoder (its own CRC-32C and
// protobuf code, see the fuzz corpus), read as an independent check.
TEST(TfEventsTest, PythonWrittenSeeds) {
  const std::string dir =
      std::string(LOCKSTEP_SOURCE_DIR) + "/fuzz/corpus/tfevents_fuzz/";
  auto log = ReadCurveLog(dir + "simple_value.tfevents");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_TRUE(log->warnings.empty());
  ASSERT_EQ(log->metrics.at("loss").points.size(), 4u);
  EXPECT_EQ(log->metrics.at("loss").points[3].step, 30);
  EXPECT_EQ(log->metrics.at("loss").points[3].value, 0.25);
  EXPECT_EQ(log->metrics.at("learning_rate").points[0].value, 0.5);
  log = ReadCurveLog(dir + "tensor_scalars.tfevents");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  ASSERT_EQ(log->metrics.at("loss").points.size(), 2u);
  EXPECT_EQ(log->metrics.at("loss").points[1].value, 2.25);
  log = ReadCurveLog(dir + "truncated.tfevents");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  ASSERT_EQ(log->warnings.size(), 1u);
  EXPECT_EQ(log->warnings[0].rfind("truncated at byte", 0), 0u);
  log = ReadCurveLog(dir + "bad_crc.tfevents");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(log->warnings[0].rfind("bad CRC at record 1", 0), 0u);
}

// A full disk (FaultEnv) is an error naming the file at Flush, and the
// events that did fit read back; short writes lose nothing.
TEST_F(TbFileTest, FullDiskFailsFlushAndShortWritesLoseNothing) {
  testing::FaultEnv env;
  ScopedEnv scope(&env);
  env.SetMaxWriteBytes(3);
  WriteSmall(300);  // more than one buffer's worth
  EXPECT_GT(env.short_writes(), 1000);
  auto full = ReadCurveLog(path_);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->lines, 601);
  EXPECT_EQ(full->malformed, 0);
  EXPECT_TRUE(full->warnings.empty());
  env.SetMaxWriteBytes(0);
  env.SetFreeBytes(100);
  auto w = TensorBoardWriter::Create(dir_.string() + "/full");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  for (int i = 0; i < 20; ++i) ASSERT_TRUE((*w)->AddScalar("x", i, i).ok());
  Status st = (*w)->Flush();
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_NE(st.ToString().find(dir_.string() + "/full"), std::string::npos);
  EXPECT_NE(st.ToString().find("No space left"), std::string::npos)
      << st.ToString();
  auto log = ReadCurveLog((*w)->path());  // a torn tail, as TensorBoard's
  ASSERT_TRUE(log.ok()) << log.status().ToString();
}

TEST(TfEventsTest, CreateInMissingParentFails) {
  auto w = TensorBoardWriter::Create("/nonexistent_dir_xyz/events.out");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), StatusCode::kIoError);
}

}  // namespace
}  // namespace lockstep
