// Hostile .pt files and checkpoints (issue 32): small files that describe
// large things. Each must end in a short error, within the file's budget
// (format/read_budget.h), and never in std::bad_alloc: every case runs in a
// child process whose address space is limited to 1 GiB more than it has,
// where the reader before the budget needed 2.8 to 12.5 GiB.
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>
#include <vector>

#include "format/pt_builder.h"
#include "lockstep/format/checkpoint.h"
#include "lockstep/format/pt_reader.h"
#include "testing/bounded_run.h"

namespace lockstep {
namespace {

using testing::BoundedRun;
using testing::BuildPt;
using testing::BuildZip;
using testing::FloatBytes;
using testing::PStr;
using testing::RunBounded;
using testing::TensorPickle;
using testing::TensorPickleSpec;
using testing::ZipBuildEntry;
using testing::ZipBuildOptions;

constexpr uint64_t kGiB = uint64_t{1} << 30;
// What a short message is: a line a terminal shows, not the input.
constexpr size_t kShortMessage = 1000;

// A torch.save archive holding `pickle` and no storage.
std::string PickleOnlyPt(const std::string& pickle) {
  return BuildZip({{"x/data.pkl", pickle}, {"x/version", "3\n"}},
                  testing::TorchZipOptions());
}

// The pickle of a tensor as it sits inside a larger pickle (no PROTO, no
// STOP).
std::string TensorCall(const TensorPickleSpec& spec) {
  std::string p = TensorPickle(spec);
  return p.substr(2, p.size() - 3);
}

// Reads `bytes` as a checkpoint in a child limited to 1 GiB more; the child
// says the error message and exits 0 when the read failed with
// NotSupported, 1 when it succeeded, 2 for another error.
BoundedRun ReadCheckpointBounded(const std::string& bytes,
                                 const PtReadOptions& options = {}) {
  return RunBounded(kGiB, [&](auto say) {
    StatusOr<Checkpoint> c =
        ReadTorchCheckpoint(bytes, nullptr, "x.pt", options);
    if (c.ok()) return 1;
    say(c.status().message());
    return c.status().code() == StatusCode::kNotSupported ? 0 : 2;
  });
}

void ExpectRefusedShortly(const BoundedRun& r, const std::string& part) {
  ASSERT_TRUE(r.exited) << "killed by signal " << r.signal;
  EXPECT_EQ(r.code, 0) << r.line.substr(0, 300);
  EXPECT_LT(r.line.size(), kShortMessage) << r.line.substr(0, 300);
  EXPECT_NE(r.line.find(part), std::string::npos) << r.line;
  EXPECT_EQ(r.line.rfind("x.pt", 0), 0u) << r.line;
  EXPECT_LT(r.peak_rss_bytes, kGiB);
}

TEST(UntrustedPtTest, DictHoldingItselfUnderA512KBKey) {
  // d = {}; d['a' * 512 KiB] = d
  std::string key(512 << 10, 'a');
  std::string pickle = std::string("\x80\x02}q", 4) + std::string(1, '\0') +
                       PStr(key) + "h" + std::string(1, '\0') + "s.";
  BoundedRun r = ReadCheckpointBounded(PickleOnlyPt(pickle));
  ExpectRefusedShortly(r, "is longer than 4096 bytes");
}

TEST(UntrustedPtTest, DictHoldingItselfUnderAShortKeyIsACycle) {
  std::string pickle = std::string("\x80\x02}q", 4) + std::string(1, '\0') +
                       PStr("self") + "h" + std::string(1, '\0') + "s.";
  BoundedRun r = ReadCheckpointBounded(PickleOnlyPt(pickle));
  ExpectRefusedShortly(r, "'self' holds itself");
}

TEST(UntrustedPtTest, OneFourMegabyteStringReferencedAThousandTimes) {
  // {'k0': s, 'k1': s, ...}: one string in the file, a thousand values.
  std::string pickle = std::string("\x80\x02}(", 4) + PStr("k0") +
                       PStr(std::string(4 << 20, 's')) + "q\x01";  // BINPUT 1
  for (int i = 1; i < 1000; ++i)
    pickle += PStr("k" + std::to_string(i)) + "h\x01";
  pickle += "u.";
  BoundedRun r = ReadCheckpointBounded(PickleOnlyPt(pickle));
  ExpectRefusedShortly(r, "a copy of a str value");
  EXPECT_NE(r.line.find("that reading this file may make"), std::string::npos);
}

TEST(UntrustedPtTest, TwoHundredStrideZeroViewsAtThePerViewCap) {
  // 200 views of one float, each expanded to 64 MiB (the per-view cap).
  TensorPickleSpec spec;
  spec.numel = 1;
  spec.shape = {int64_t{16} << 20};
  spec.stride = {0};
  std::string pickle = "\x80\x02}(";
  for (int i = 0; i < 200; ++i)
    pickle += PStr("w" + std::to_string(i)) + TensorCall(spec);
  pickle += "u.";
  std::string file = BuildPt("x", pickle, FloatBytes(1));
  EXPECT_LT(file.size(), 64u << 10);
  BoundedRun r = ReadCheckpointBounded(file);
  ExpectRefusedShortly(r, "a copy of the view of shape [16777216]");

  // Under the budget, the same views read.
  PtReadOptions small;
  small.max_expanded_bytes = 1 << 20;
  spec.shape = {1 << 10};
  pickle = "\x80\x02}(";
  for (int i = 0; i < 200; ++i)
    pickle += PStr("w" + std::to_string(i)) + TensorCall(spec);
  auto c = ReadTorchCheckpoint(BuildPt("x", pickle + "u.", FloatBytes(1)),
                               nullptr, "x.pt", small);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->entries.size(), 200u);
}

// Raw DEFLATE of `chunks` MiB of zeros, built from one flushed chunk, and
// its CRC-32.
std::string ZeroBomb(int chunks, uint32_t* crc) {
  std::string zeros(1 << 20, '\0');
  z_stream zs{};
  deflateInit2(&zs, 9, Z_DEFLATED, -MAX_WBITS, 9, Z_DEFAULT_STRATEGY);
  std::string chunk(deflateBound(&zs, zeros.size()) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(zeros.data());
  zs.avail_in = static_cast<uInt>(zeros.size());
  zs.next_out = reinterpret_cast<Bytef*>(chunk.data());
  zs.avail_out = static_cast<uInt>(chunk.size());
  deflate(&zs, Z_FULL_FLUSH);  // byte-aligned, no history: repeatable
  chunk.resize(zs.total_out);
  deflateEnd(&zs);
  std::string out;
  out.reserve(chunk.size() * static_cast<size_t>(chunks) + 2);
  for (int i = 0; i < chunks; ++i) out += chunk;
  out += std::string("\x03\x00", 2);  // an empty final block
  uLong c = crc32(0, reinterpret_cast<const Bytef*>(zeros.data()),
                  static_cast<uInt>(zeros.size()));
  uLong one = c;
  for (int i = 1; i < chunks; ++i) c = crc32_combine(c, one, 1 << 20);
  *crc = static_cast<uint32_t>(c);
  return out;
}

TEST(UntrustedPtTest, FourMegabyteDeflateBomb) {
  uint32_t crc = 0;
  ZipBuildEntry storage{"x/data/0", ZeroBomb(4096, &crc)};
  storage.predeflated = true;
  storage.inflated_size = uint64_t{4} << 30;
  storage.inflated_crc = crc;
  TensorPickleSpec spec;
  spec.numel = int64_t{1} << 30;
  spec.shape = {int64_t{1} << 30};
  ZipBuildOptions o = testing::TorchZipOptions();
  o.zip64 = true;
  std::string file = BuildZip(
      {{"x/data.pkl", TensorPickle(spec)}, storage, {"x/version", "3\n"}}, o);
  EXPECT_LT(file.size(), 5u << 20);
  BoundedRun r = RunBounded(kGiB, [&](auto say) {
    StatusOr<Tensor> t = ReadPtTensorFromBuffer(file, "x.pt");
    if (t.ok()) return 1;
    say(t.status().message());
    return t.status().code() == StatusCode::kNotSupported ? 0 : 2;
  });
  ExpectRefusedShortly(r, "inflating zip entry 'x/data/0' needs 4.0 GiB");
}

TEST(UntrustedPtTest, DeflatedStorageViewedManyTimesIsChargedEachTime) {
  // Each view of a deflated storage inflates its own copy.
  TensorPickleSpec spec;
  spec.numel = 1 << 18;  // 1 MiB
  spec.shape = {1 << 18};
  std::string pickle = "\x80\x02}(";
  for (int i = 0; i < 8; ++i)
    pickle += PStr("w" + std::to_string(i)) + TensorCall(spec);
  pickle += "u.";
  std::string file = BuildZip({{"x/data.pkl", pickle},
                               {"x/data/0", FloatBytes(1 << 18), true},
                               {"x/version", "3\n"}},
                              testing::TorchZipOptions());
  PtReadOptions o;
  o.limits.expanded_base = 4 << 20;
  o.limits.expanded_per_file_byte = 0;
  auto c = ReadTorchCheckpoint(file, nullptr, "x.pt", o);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().code(), StatusCode::kNotSupported);
  // Three copies and the names fit in 4 MiB, a fourth copy does not.
  EXPECT_NE(c.status().message().find("needs 1.0 MiB more, past the 4.0 MiB"),
            std::string::npos)
      << c.status().message();
  o.limits.expanded_base = 9 << 20;
  c = ReadTorchCheckpoint(file, nullptr, "x.pt", o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->entries.size(), 8u);
}

TEST(UntrustedPtTest, StorageKeyOfAMegabyteIsNotEchoed) {
  TensorPickleSpec spec;
  spec.key = std::string(1 << 20, 'k');
  auto t = ReadPtTensorFromBuffer(
      BuildPt("x", TensorPickle(spec), FloatBytes(4)), "x.pt");
  ASSERT_FALSE(t.ok());
  EXPECT_LT(t.status().message().size(), kShortMessage);
}

}  // namespace
}  // namespace lockstep
