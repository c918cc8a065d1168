// A gtest assertion for byte-identical strings that reports the first
// differing byte with some context on each side.
#ifndef LOCKSTEP_TESTS_TESTING_SAME_BYTES_H_
#define LOCKSTEP_TESTS_TESTING_SAME_BYTES_H_

#include <gtest/gtest.h>

#include <string>

namespace lockstep::testing {

inline ::testing::AssertionResult SameBytes(const std::string& got,
                                            const std::string& want) {
  if (got == want) return ::testing::AssertionSuccess();
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  size_t from = i < 40 ? 0 : i - 40;
  return ::testing::AssertionFailure()
         << "first difference at byte " << i << " (sizes " << got.size()
         << " vs " << want.size() << ")\n got: ..." << got.substr(from, 80)
         << "\nwant: ..." << want.substr(from, 80);
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_TESTING_SAME_BYTES_H_
