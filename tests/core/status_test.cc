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

}  // namespace
}  // namespace lockstep
