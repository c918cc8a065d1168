#include "lockstep/core/status.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

StatusOr<int> Half(int x) {
  if (x % 2) return Status::InvalidArgument("x", "is odd");
  return x / 2;
}

Status Chain(int x, int* out) {
  LOCKSTEP_ASSIGN_OR_RETURN(int h, Half(x));
  LOCKSTEP_ASSIGN_OR_RETURN(*out, Half(h));
  return Status::Ok();
}

TEST(StatusTest, OkAndMessages) {
  EXPECT_TRUE(Status().ok());
  Status s = Status::Corruption("dump.json", "bad token");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "dump.json: bad token");
  EXPECT_EQ(s.ToString(), "Corruption: dump.json: bad token");
  EXPECT_EQ(s.WithContext("rank0").message(), "rank0: dump.json: bad token");
  EXPECT_EQ(Status::NotFound("x").message(), "x");
}

TEST(StatusTest, StatusOrPropagates) {
  int out = 0;
  EXPECT_TRUE(Chain(8, &out).ok());
  EXPECT_EQ(out, 2);
  Status s = Chain(6, &out);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "x: is odd");
}

TEST(StatusTest, StatusOrFromOkStatusIsInternalError) {
  StatusOr<int> v(Status::Ok());
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInternal);
}

// Issue 32: a 53 MB name in a hostile file printed a 53 MB error line.
TEST(StatusTest, MessageOfMegabyteInputStaysShort) {
  std::string huge(53 << 20, 'n');
  Status s = Status::Corruption("x.pt: '" + huge + "'", "bad " + huge);
  EXPECT_LT(s.message().size(), kMaxStatusSubject + kMaxStatusProblem + 64);
  EXPECT_EQ(s.message().rfind("x.pt: 'nnn", 0), 0u);
  EXPECT_NE(s.message().find("...(55574536 bytes)"), std::string::npos);
  EXPECT_LT(s.WithContext(huge).message().size(),
            2 * kMaxStatusSubject + kMaxStatusProblem + 64);
}

TEST(StatusTest, AbbreviateCutsAtACharacterBoundary) {
  EXPECT_EQ(Abbreviate("short", 10), "short");
  EXPECT_EQ(Abbreviate("abcdef", 3), "abc...(6 bytes)");
  // "é" is two bytes; a cut inside it backs up to its start.
  EXPECT_EQ(Abbreviate("a\xc3\xa9"
                       "b",
                       2),
            "a...(4 bytes)");
}

}  // namespace
}  // namespace lockstep
