// The partial result format (partial_result.h): what one process encodes
// decodes to the same values, bit for bit; damaged bytes are Corruption
// naming where, never a crash.
#include "lockstep/compare/partial_result.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "lockstep/compare/compare_share.h"
#include "lockstep/format/crc32.h"
#include "testing/rank_dumps.h"
#include "testing/test_dir.h"

namespace lockstep {
namespace {

PartialResult Handmade() {
  PartialResult p;
  p.header_pair = 3;
  p.mode = CompareMode::kMd5;
  p.with_stack = true;
  CompareRow r;
  r.cells = {"Functional.linear.0.forward.output.0", "N/A", "", "0.5"};
  r.entry = "Functional.linear.0.forward";
  r.rank = 7;
  r.step = 12;
  r.is_output = true;
  r.is_tensor = true;
  r.module = 4;
  r.verdict = Verdict::kError;
  r.reason = DivergenceReason::kOverflow;
  r.messages = {"inf in target", ""};
  r.msprobe_result = "warning";
  r.cosine = -0.0;
  r.max_abs_err = std::numeric_limits<double>::infinity();
  r.max_rel_err = std::nan("7");  // a NaN payload
  r.error = 1e-300;
  r.target_stats = {1, 2, 3, -std::numeric_limits<double>::infinity()};
  p.rows.push_back(r);
  p.rows.push_back(CompareRow());  // no cells, NaN everywhere
  p.warnings = {"w0", "rank 7: group unreadable", "w2"};
  p.gaps.push_back({"Functional.relu.0.forward", true, 7, 5, 12, 9});
  PairOutcome o;
  o.pair = 3;
  o.rows = 2;
  o.warnings = 3;
  o.gaps = 1;
  o.collective_warning = 1;
  o.collectives.step = 12;
  o.collectives.rank = 7;
  o.collectives.calls.push_back({"Distributed.send.0.forward", "send",
                                 CollectiveFlow::kSend, "[6, 7]", -1, 6, 0,
                                 "tensor"});
  o.parents.emplace();
  o.parents->modules = {"Module.a.A.forward.0"};
  o.parents->parent = {{"Module.a.A.forward.0", ""}, {"x", "Module.a"}};
  o.stack_file = RankStackFile{12, 7, "/d/step12/rank7/stack.json"};
  p.pairs.push_back(o);
  PairOutcome bad;
  bad.pair = 9;
  bad.kind = PairOutcome::Kind::kFailed;
  bad.status = Status::InvalidArgument("dump.json", "no entries");
  p.pairs.push_back(bad);
  return p;
}

TEST(PartialResultTest, RoundTripIsBitExact) {
  PartialResult p = Handmade();
  std::string bytes = EncodePartial(p);
  StatusOr<PartialResult> q = DecodePartial(bytes, "test");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(EncodePartial(*q), bytes);
  const CompareRow& r = q->rows[0];
  EXPECT_EQ(r.cells.ToVector(), p.rows[0].cells.ToVector());
  EXPECT_EQ(r.msprobe_result, "warning");
  EXPECT_TRUE(std::signbit(r.cosine));
  EXPECT_TRUE(std::isinf(r.max_abs_err));
  uint64_t want, got;
  std::memcpy(&want, &p.rows[0].max_rel_err, 8);
  std::memcpy(&got, &r.max_rel_err, 8);
  EXPECT_EQ(got, want);  // the NaN's payload too
  EXPECT_EQ(q->rows[1].msprobe_result, "");
  EXPECT_EQ(q->pairs[0].parents->parent.at("x"), "Module.a");
  EXPECT_EQ(q->pairs[0].collectives.calls[0].peer, 6);
  EXPECT_EQ(q->pairs[1].status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(q->pairs[1].status.message(), "dump.json: no entries");
}

TEST(PartialResultTest, RoundTripOfARealShare) {
  std::string dir = testing::FreshTestDir("partial_result_");
  testing::RankProgram prog;
  prog.ranks = 4;
  prog.phases = {{testing::Phase::kCompute, 2}, {testing::Phase::kAllReduce}};
  prog.fault_rank = 2;
  prog.fault_op = 0;
  testing::WriteRankDumps(prog, dir);
  StatusOr<ComparePlan> plan =
      PlanCompare(dir + "target", dir + "baseline", CompareOptions());
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  PartialResult p = CompareShare(*plan, ShareOwners(*plan, 2), 1,
                                 CompareOptions(), std::nullopt);
  ASSERT_EQ(p.pairs.size(), 2u);  // ranks 2 and 3
  ASSERT_FALSE(p.rows.empty());
  std::string bytes = EncodePartial(p);
  StatusOr<PartialResult> q = DecodePartial(bytes, "test");
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(EncodePartial(*q), bytes);
}

TEST(PartialResultTest, EveryTruncationAndBitFlipIsCorruption) {
  std::string bytes = EncodePartial(Handmade());
  for (size_t n = 0; n < bytes.size(); ++n) {
    StatusOr<PartialResult> q = DecodePartial(bytes.substr(0, n), "p1");
    ASSERT_FALSE(q.ok()) << "truncated to " << n;
    EXPECT_EQ(q.status().code(), StatusCode::kCorruption);
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string b = bytes;
    b[i] ^= 0x10;
    StatusOr<PartialResult> q = DecodePartial(b, "partial of process 1");
    ASSERT_FALSE(q.ok()) << "byte " << i;
    EXPECT_NE(q.status().message().find("partial of process 1: "),
              std::string::npos);
  }
  std::string b = bytes + "x";
  EXPECT_NE(DecodePartial(b, "p").status().message().find("length"),
            std::string::npos);
}

// Damage that keeps the CRC right (a sender's bug, not the wire's): the
// reader still checks every count and value, and never crashes.
TEST(PartialResultTest, DamagedBodyWithGoodCrcNeverCrashes) {
  const std::string bytes = EncodePartial(Handmade());
  std::mt19937 rng(18);
  int refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string body = bytes.substr(16, bytes.size() - 20);
    for (int k = 0; k < 1 + trial % 4; ++k) {
      body[rng() % body.size()] = static_cast<char>(rng());
    }
    std::string b = bytes.substr(0, 16) + body;
    uint32_t crc = Crc32(body);
    b.append(reinterpret_cast<const char*>(&crc), 4);
    StatusOr<PartialResult> q = DecodePartial(b, "p");
    if (!q.ok()) {
      EXPECT_EQ(q.status().code(), StatusCode::kCorruption);
      ++refused;
    }
  }
  EXPECT_GT(refused, 1000);
}

TEST(PartialResultTest, StatusRoundTrip) {
  Status s = Status::NotFound("/x/dump.json", "no such file");
  Status t = DecodeStatus(EncodeStatus(s));
  EXPECT_EQ(t.code(), s.code());
  EXPECT_EQ(t.message(), s.message());
  EXPECT_TRUE(DecodeStatus(EncodeStatus(Status::Ok())).ok());
  EXPECT_EQ(DecodeStatus("\x09").code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace lockstep
