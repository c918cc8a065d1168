#include "lockstep/report/csv.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <string>

namespace lockstep {
namespace {

TEST(CsvTest, FormulaLikeCellsAreNeutralised) {
  // OWASP's list: cells a spreadsheet would run.
  EXPECT_EQ(CsvNeutralise("=1+1"), "'=1+1");
  EXPECT_EQ(CsvNeutralise("=HYPERLINK(\"http://x\")"),
            "'=HYPERLINK(\"http://x\")");
  EXPECT_EQ(CsvNeutralise("+cmd|' /C calc'!A0"), "'+cmd|' /C calc'!A0");
  EXPECT_EQ(CsvNeutralise("-2+3"), "'-2+3");
  EXPECT_EQ(CsvNeutralise("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(CsvNeutralise("\t=1"), "'\t=1");
  EXPECT_EQ(CsvNeutralise("\r=1"), "'\r=1");
  EXPECT_EQ(CsvNeutralise("-"), "'-");
}

TEST(CsvTest, NumbersAndNamesStayAsTheyAre) {
  for (const char* c : {"-1.5", "-0", "+3", "-1e-05", "-inf", "-nan", "-12.5%",
                        " -inf", "Functional.linear.0.forward.input.0",
                        "torch.float32", "[2, 3]", "N/A", "", "0.99999"}) {
    EXPECT_EQ(CsvNeutralise(c), c) << c;
    EXPECT_FALSE(CsvIsFormulaLike(c)) << c;
  }
}

// Numbers are told from formulas without strtod where the text is a plain
// decimal: the answer must be strtod's for every short string of number
// characters.
TEST(CsvTest, FormulaTestAgreesWithStrtod) {
  auto reference = [](std::string cell) {
    if (cell.empty() ||
        std::string("=+-@\t\r").find(cell[0]) == std::string::npos)
      return false;
    if (cell.back() == '%') cell.pop_back();
    if (cell.empty()) return true;
    char* end = nullptr;
    std::strtod(cell.c_str(), &end);
    return end != cell.c_str() + cell.size();
  };
  const std::string alphabet = "+-.eE019%x ";
  std::mt19937 rng(3);
  for (int k = 0; k < 200000; ++k) {
    std::string cell(1 + rng() % 7, ' ');
    for (char& c : cell) c = alphabet[rng() % alphabet.size()];
    ASSERT_EQ(CsvIsFormulaLike(cell), reference(cell)) << "'" << cell << "'";
  }
}

TEST(CsvTest, QuotingRoundTrips) {
  std::string line;
  AppendCsvLine({"a,b", "say \"hi\"", "x\ny", "'=1"}, &line);
  auto rows = ParseCsv(line);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0],
            (std::vector<std::string>{"a,b", "say \"hi\"", "x\ny", "'=1"}));
}

// Issue 32: raw ESC and BEL bytes from a dump reached CSV cells (and the
// terminal of whoever printed the file).
TEST(CsvTest, RawEscAndBelBytesInCellsAreEscaped) {
  std::string out;
  AppendCsvLine({"Functional.\x1b[31mred.0.forward", "ring\x07",
                 "evil\xe2\x80\xae"
                 "txt",
                 "multi\nline"},
                &out);
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\x07'), std::string::npos) << out;
  EXPECT_EQ(out,
            "Functional.\\x1b[31mred.0.forward,ring\\x07,evil\\u202etxt,"
            "\"multi\nline\"\n");
  auto rows = ParseCsv(out);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][3], "multi\nline");
}

}  // namespace
}  // namespace lockstep
