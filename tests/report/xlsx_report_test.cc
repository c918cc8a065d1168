#include "lockstep/report/xlsx_report.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "lockstep/core/file.h"
#include "report/synthetic_result.h"
#include "report/zip_reader.h"

namespace lockstep {
namespace {

using testing::MakeSyntheticResult;
using testing::ReadZip;

class XlsxReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lockstep_xlsx_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `r` and returns the workbook's members (fails the test if the
  // file is not a valid zip).
  std::map<std::string, std::string> WriteAndOpen(const CompareResult& r,
                                                  XlsxOptions options = {}) {
    std::string path = (dir_ / "out.xlsx").string();
    Status s = WriteXlsxReport(r, path, options);
    EXPECT_TRUE(s.ok()) << s.ToString();
    auto bytes = ReadFileToString(path);
    EXPECT_TRUE(bytes.ok());
    if (!bytes.ok()) return {};
    std::string error;
    auto files = ReadZip(*bytes, &error);
    EXPECT_FALSE(files.empty()) << error;
    return files;
  }

  std::filesystem::path dir_;
};

// The XML of cell `ref` ("I2"): from "<c r=\"I2\"" to "</c>", or "".
std::string Cell(const std::string& sheet, const std::string& ref) {
  size_t at = sheet.find("<c r=\"" + ref + "\"");
  if (at == std::string::npos) return "";
  size_t end = sheet.find("</c>", at);
  size_t self_closed = sheet.find("/>", at);
  if (self_closed < end && sheet.find('>', at) == self_closed + 1)
    end = self_closed;
  return sheet.substr(at, end - at);
}

// The style index of a cell ("" when it has none).
std::string StyleOf(const std::string& cell_xml) {
  size_t at = cell_xml.find(" s=\"");
  if (at == std::string::npos) return "";
  return cell_xml.substr(at + 4, cell_xml.find('"', at + 4) - at - 4);
}

// The n-th (0-based) element `<tag` inside `<section ...>...</section>`.
std::string NthElement(const std::string& xml, const std::string& section,
                       const std::string& tag, int n) {
  size_t at = xml.find("<" + section);
  for (int i = 0; at != std::string::npos && i <= n; ++i)
    at = xml.find("<" + tag, at + 1);
  if (at == std::string::npos) return "";
  return xml.substr(at, xml.find('>', at) - at);
}

// The fill colour that style index `s` applies, e.g. "FFFF0000".
std::string FillColorOfStyle(const std::string& styles, const std::string& s) {
  std::string xf = NthElement(styles, "cellXfs", "xf", std::stoi(s));
  size_t at = xf.find("fillId=\"");
  if (at == std::string::npos) return "";
  int fill = std::stoi(xf.substr(at + 8));
  size_t f = styles.find("<fills");
  for (int i = 0; f != std::string::npos && i <= fill; ++i)
    f = styles.find("<fill>", f + 1);
  size_t rgb = styles.find("rgb=\"", f);
  return f == std::string::npos || rgb == std::string::npos
             ? ""
             : styles.substr(rgb + 5, 8);
}

TEST(XlsxReportSupportTest, WithoutLibxlsxwriterSaysNotSupported) {
  if (XlsxReportSupported()) GTEST_SKIP() << "built with libxlsxwriter";
  std::string path =
      std::filesystem::temp_directory_path() / "lockstep_no_xlsx.xlsx";
  Status s = WriteXlsxReport(MakeSyntheticResult(3), path);
  EXPECT_EQ(s.code(), StatusCode::kNotSupported);
  EXPECT_NE(s.message().find("libxlsxwriter"), std::string::npos);
  EXPECT_FALSE(PathExists(path));
}

TEST_F(XlsxReportTest, IsAValidZipWithTheWorkbookParts) {
  if (!XlsxReportSupported()) GTEST_SKIP() << "built without libxlsxwriter";
  auto files = WriteAndOpen(MakeSyntheticResult(300));
  for (const char* name :
       {"[Content_Types].xml", "_rels/.rels", "xl/workbook.xml",
        "xl/styles.xml", "xl/worksheets/sheet1.xml"}) {
    EXPECT_EQ(files.count(name), 1u) << name;
  }
  EXPECT_EQ(files.count("xl/worksheets/sheet2.xml"), 0u);
  // No temporary file left beside it.
  int n = 0;
  for (auto& e : std::filesystem::directory_iterator(dir_))
    n += e.is_regular_file();
  EXPECT_EQ(n, 1);
}

TEST_F(XlsxReportTest, HeaderIsBoldFrozenAndFiltered) {
  if (!XlsxReportSupported()) GTEST_SKIP() << "built without libxlsxwriter";
  auto files = WriteAndOpen(MakeSyntheticResult(300));
  const std::string& sheet = files["xl/worksheets/sheet1.xml"];
  const std::string& styles = files["xl/styles.xml"];
  EXPECT_NE(Cell(sheet, "A1").find("NPU Name"), std::string::npos);
  EXPECT_NE(Cell(sheet, "AA1").find("Data_name"), std::string::npos);
  std::string header_style = StyleOf(Cell(sheet, "A1"));
  ASSERT_FALSE(header_style.empty());
  std::string xf = NthElement(styles, "cellXfs", "xf", std::stoi(header_style));
  int font = std::stoi(xf.substr(xf.find("fontId=\"") + 8));
  size_t f = styles.find("<fonts");
  for (int i = 0; i <= font; ++i) f = styles.find("<font>", f + 1);
  EXPECT_EQ(styles.substr(f, styles.find("</font>", f) - f).find("<b/>") !=
                std::string::npos,
            true);
  EXPECT_NE(sheet.find("ySplit=\"1\""), std::string::npos);
  EXPECT_NE(sheet.find("state=\"frozen\""), std::string::npos);
  EXPECT_NE(sheet.find("<autoFilter ref=\"A1:AA301\"/>"), std::string::npos);
}

TEST_F(XlsxReportTest, NumbersAreNumbersAndTextStaysText) {
  if (!XlsxReportSupported()) GTEST_SKIP() << "built without libxlsxwriter";
  CompareResult r;
  r.columns = {"NPU Name", "NPU MD5", "Cosine", "MaxAbsErr",
               "Max diff", "Rel",     "Shape",  "Big"};
  CompareRow row;
  row.cells = {"123",      "00123456", "0.99999",  " inf",
               "-1.5e-05", "12.5%",    "[32, 64]", "nan"};
  r.rows.push_back(row);
  auto files = WriteAndOpen(r);
  const std::string& sheet = files["xl/worksheets/sheet1.xml"];
  EXPECT_NE(Cell(sheet, "A2").find("inlineStr"), std::string::npos)
      << Cell(sheet, "A2");
  EXPECT_NE(Cell(sheet, "B2").find("<t>00123456</t>"), std::string::npos)
      << Cell(sheet, "B2");
  EXPECT_NE(Cell(sheet, "C2").find("<v>0.99999</v>"), std::string::npos)
      << Cell(sheet, "C2");
  EXPECT_EQ(Cell(sheet, "C2").find("inlineStr"), std::string::npos);
  EXPECT_NE(Cell(sheet, "D2").find("inlineStr"), std::string::npos)
      << Cell(sheet, "D2");
  std::string e2 = Cell(sheet, "E2");  // libxlsxwriter prints %.16G
  EXPECT_TRUE(e2.find("<v>-1.5E-05</v>") != std::string::npos ||
              e2.find("<v>-1.5e-05</v>") != std::string::npos)
      << e2;
  for (const char* ref : {"F2", "G2", "H2"}) {
    EXPECT_NE(Cell(sheet, ref).find("inlineStr"), std::string::npos) << ref;
  }
}

TEST_F(XlsxReportTest, ErrorRowsRedWarningRowsYellow) {
  if (!XlsxReportSupported()) GTEST_SKIP() << "built without libxlsxwriter";
  CompareResult r = MakeSyntheticResult(300);
  auto files = WriteAndOpen(r);
  const std::string& sheet = files["xl/worksheets/sheet1.xml"];
  const std::string& styles = files["xl/styles.xml"];
  int checked[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < r.rows.size(); ++i) {
    std::string row = std::to_string(i + 2);
    std::string first = StyleOf(Cell(sheet, "A" + row)),
                last = StyleOf(Cell(sheet, "AA" + row));
    EXPECT_EQ(first, last) << "row " << row;  // the whole row shares one fill
    Verdict v = r.rows[i].verdict;
    ++checked[static_cast<int>(v)];
    if (v == Verdict::kError) {
      EXPECT_EQ(FillColorOfStyle(styles, first), "FFFF0000") << "row " << row;
    } else if (v == Verdict::kWarning) {
      EXPECT_EQ(FillColorOfStyle(styles, first), "FFFFFF00") << "row " << row;
    } else {
      EXPECT_EQ(first, "") << "row " << row;
    }
  }
  for (int n : checked) EXPECT_GT(n, 0);
}

TEST_F(XlsxReportTest, SplitsIntoSheetsOfAtMostRowsPerSheet) {
  if (!XlsxReportSupported()) GTEST_SKIP() << "built without libxlsxwriter";
  CompareResult r = MakeSyntheticResult(250);
  auto files = WriteAndOpen(r, XlsxOptions{100});
  ASSERT_EQ(files.count("xl/worksheets/sheet3.xml"), 1u);
  EXPECT_EQ(files.count("xl/worksheets/sheet4.xml"), 0u);
  const std::string& workbook = files["xl/workbook.xml"];
  EXPECT_NE(workbook.find("name=\"Sheet3\""), std::string::npos);
  const std::string& third = files["xl/worksheets/sheet3.xml"];
  EXPECT_NE(Cell(third, "A1").find("NPU Name"),
            std::string::npos);  // each sheet has the header
  EXPECT_NE(Cell(third, "A51").find(r.rows[249].npu_name()), std::string::npos);
  EXPECT_TRUE(Cell(third, "A52").empty());
  EXPECT_NE(Cell(files["xl/worksheets/sheet2.xml"], "A2")
                .find(r.rows[100].npu_name()),
            std::string::npos);
}

TEST_F(XlsxReportTest, OverlongCellIsClippedNotRejected) {
  if (!XlsxReportSupported()) GTEST_SKIP() << "built without libxlsxwriter";
  CompareResult r;
  r.columns = {"NPU Name", "NPU_Stack_Info"};
  CompareRow row;
  row.cells = {"a", std::string(40000, 'x')};
  r.rows.push_back(row);
  auto files = WriteAndOpen(r);
  std::string cell = Cell(files["xl/worksheets/sheet1.xml"], "B2");
  // A row's cell is cut below Excel's limit already (PackedCells), with a
  // mark that says how long it was.
  std::string mark = CutCellMark(40000);
  ASSERT_LT(kMaxCellBytes, kXlsxMaxCellBytes);
  EXPECT_NE(
      cell.find(std::string(kMaxCellBytes - mark.size(), 'x') + mark + "</t>"),
      std::string::npos);
}

TEST_F(XlsxReportTest, EmptyResultHasHeaderOnly) {
  if (!XlsxReportSupported()) GTEST_SKIP() << "built without libxlsxwriter";
  CompareResult r;
  r.columns = testing::TensorColumns();
  auto files = WriteAndOpen(r);
  EXPECT_NE(Cell(files["xl/worksheets/sheet1.xml"], "A1").find("NPU Name"),
            std::string::npos);
  EXPECT_TRUE(Cell(files["xl/worksheets/sheet1.xml"], "A2").empty());
}

TEST_F(XlsxReportTest, MissingDirectoryIsNotFoundAndLeavesNothing) {
  if (!XlsxReportSupported()) GTEST_SKIP() << "built without libxlsxwriter";
  std::string path = (dir_ / "missing_dir" / "out.xlsx").string();
  Status s = WriteXlsxReport(MakeSyntheticResult(10), path);
  EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.ToString();
  EXPECT_NE(s.message().find(path), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

TEST_F(XlsxReportTest, UnwritablePathsAreIoErrors) {
  if (!XlsxReportSupported()) GTEST_SKIP() << "built without libxlsxwriter";
  ASSERT_TRUE(WriteFileAtomic((dir_ / "file").string(), "x").ok());
  Status under_file = WriteXlsxReport(MakeSyntheticResult(3),
                                      (dir_ / "file" / "o.xlsx").string());
  EXPECT_EQ(under_file.code(), StatusCode::kIoError) << under_file.ToString();
  std::filesystem::create_directories(dir_ / "busy" / "child");
  Status onto_dir =
      WriteXlsxReport(MakeSyntheticResult(3), (dir_ / "busy").string());
  EXPECT_EQ(onto_dir.code(), StatusCode::kIoError) << onto_dir.ToString();
  EXPECT_NE(onto_dir.message().find("rename failed"), std::string::npos);
  int files = 0;
  for (auto& e : std::filesystem::directory_iterator(dir_))
    files += e.is_regular_file();
  EXPECT_EQ(files, 1);  // "file" only: no temporary left
}

TEST_F(XlsxReportTest, RowsPerSheetOutOfRangeIsInvalidArgument) {
  if (!XlsxReportSupported()) GTEST_SKIP() << "built without libxlsxwriter";
  std::string path = (dir_ / "out.xlsx").string();
  EXPECT_EQ(
      WriteXlsxReport(MakeSyntheticResult(3), path, XlsxOptions{0}).code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(WriteXlsxReport(MakeSyntheticResult(3), path,
                            XlsxOptions{kXlsxRowsPerSheet + 1})
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(PathExists(path));
}

}  // namespace
}  // namespace lockstep
