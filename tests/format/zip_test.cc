#include "lockstep/format/zip.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "format/zip_builder.h"
#include "lockstep/core/file.h"

namespace lockstep {
namespace {

using testing::BuildZip;
using testing::ZipBuildOptions;

const std::string kPtDir = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/pt/";

std::string Slurp(const std::string& path) {
  auto s = ReadFileToString(path);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : std::string();
}

// Opens `archive` and returns entry `name`'s contents, or the error.
StatusOr<std::string> ReadEntry(const std::string& archive,
                                const std::string& name,
                                uint64_t max_bytes = UINT64_MAX) {
  LOCKSTEP_ASSIGN_OR_RETURN(ZipReader zip, ZipReader::Open(archive, "t.zip"));
  const ZipEntry* e = zip.Find(name);
  if (e == nullptr) return Status::NotFound(name);
  std::string scratch;
  LOCKSTEP_ASSIGN_OR_RETURN(std::string_view data,
                            zip.Data(*e, &scratch, max_bytes));
  LOCKSTEP_RETURN_IF_ERROR(zip.VerifyCrc(*e, data));
  return std::string(data);
}

void ExpectError(const Status& s, StatusCode code, const std::string& part) {
  EXPECT_EQ(s.code(), code) << s.ToString();
  EXPECT_NE(s.message().find(part), std::string::npos) << s.ToString();
}

TEST(Crc32Test, KnownValues) {
  EXPECT_EQ(Crc32(""), 0u);
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926u);
}

TEST(ZipReaderTest, ReadsTorchArchiveZeroCopyAndAligned) {
  std::string bytes = Slurp(kPtDir + "float32.pt");
  auto zip = ZipReader::Open(bytes, "float32.pt");
  ASSERT_TRUE(zip.ok()) << zip.status().ToString();
  ASSERT_EQ(zip->entries().size(), 3u);
  EXPECT_EQ(zip->entries()[0].name, "float32/data.pkl");
  const ZipEntry* e = zip->Find("float32/data/0");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->method, kZipStored);
  EXPECT_EQ(e->data_offset % 64, 0u);  // torch aligns storages
  std::string scratch;
  auto data = zip->Data(*e, &scratch);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ(data->data(), bytes.data() + e->data_offset);  // a view
  EXPECT_EQ(std::string(*data), Slurp(kPtDir + "float32.bin"));
  EXPECT_TRUE(zip->VerifyCrc(*e, *data).ok());
  EXPECT_EQ(zip->Find("float32/nothing"), nullptr);
}

TEST(ZipReaderTest, InflatesDeflateEntriesFromPythonZipfile) {
  std::string bytes = Slurp(kPtDir + "deflated.pt");
  auto got = ReadEntry(bytes, "float64/data/0");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, Slurp(kPtDir + "deflated.bin"));
}

struct Variant {
  const char* label;
  ZipBuildOptions options;
};

TEST(ZipReaderTest, BuiltVariantsRoundTrip) {
  ZipBuildOptions zip64, dd, aligned, comment, all;
  zip64.zip64 = true;
  dd.data_descriptor = true;
  aligned.align = 64;
  comment.comment = "a comment with PK\x05\x06 inside";
  all = zip64;
  all.data_descriptor = true;
  all.align = 64;
  all.comment = "c";
  std::string big(100000, 'x');
  for (const Variant& v :
       {Variant{"plain", {}}, Variant{"zip64", zip64},
        Variant{"descriptor", dd}, Variant{"aligned", aligned},
        Variant{"comment", comment}, Variant{"all", all}}) {
    SCOPED_TRACE(v.label);
    std::string a = BuildZip({{"a/x", "hello"},
                              {"a/empty", ""},
                              {"a/big", big, /*deflate=*/true},
                              {"a/edeflate", "", true}},
                             v.options);
    EXPECT_EQ(ReadEntry(a, "a/x").value(), "hello");
    EXPECT_EQ(ReadEntry(a, "a/empty").value(), "");
    EXPECT_EQ(ReadEntry(a, "a/big").value(), big);
    EXPECT_EQ(ReadEntry(a, "a/edeflate").value(), "");
  }
}

TEST(ZipReaderTest, Zip64ExtraValuesAreUsed) {
  ZipBuildOptions o;
  o.zip64 = true;
  std::string a = BuildZip({{"one", "1"}, {"two", "22"}}, o);
  auto zip = ZipReader::Open(a, "t.zip");
  ASSERT_TRUE(zip.ok()) << zip.status().ToString();
  EXPECT_EQ(zip->Find("two")->uncompressed_size, 2u);
  EXPECT_GT(zip->Find("two")->local_header_offset, 0u);
}

TEST(ZipReaderTest, EmptyArchiveHasNoEntries) {
  auto zip = ZipReader::Open(BuildZip({}), "t.zip");
  ASSERT_TRUE(zip.ok());
  EXPECT_TRUE(zip->entries().empty());
}

TEST(ZipReaderTest, NotAZip) {
  ExpectError(ZipReader::Open("", "e.zip").status(), StatusCode::kCorruption,
              "e.zip: not a ZIP archive: 0 bytes");
  ExpectError(ZipReader::Open(std::string(100, 'a'), "e.zip").status(),
              StatusCode::kCorruption, "no end of central directory");
}

TEST(ZipReaderTest, EveryTruncationFailsCleanly) {
  ZipBuildOptions o;
  o.zip64 = o.data_descriptor = true;
  o.align = 64;
  std::string a =
      BuildZip({{"a/x", "hello"}, {"a/y", std::string(300, 'y')}}, o);
  for (size_t n = 0; n < a.size(); ++n) {
    auto zip = ZipReader::Open(std::string_view(a).substr(0, n), "t.zip");
    EXPECT_FALSE(zip.ok()) << n;
    EXPECT_EQ(zip.status().message().rfind("t.zip", 0), 0u) << n;
  }
}

// Flips each byte of the directory and end records: Open and Data either
// succeed or fail with a message naming the archive; never crash.
TEST(ZipReaderTest, FlippedDirectoryBytesNeverCrash) {
  for (bool zip64 : {false, true}) {
    ZipBuildOptions o;
    o.zip64 = zip64;
    std::string a = BuildZip({{"a/x", "hello"}, {"a/z", "zz", true}}, o);
    size_t cd = a.find("PK\x01\x02");
    for (size_t i = cd; i < a.size(); ++i) {
      for (unsigned char x : {0x01, 0x80, 0xFF}) {
        std::string b = a;
        b[i] = static_cast<char>(b[i] ^ x);
        auto zip = ZipReader::Open(b, "t.zip");
        if (!zip.ok()) {
          EXPECT_EQ(zip.status().message().rfind("t.zip", 0), 0u);
          continue;
        }
        for (const ZipEntry& e : zip->entries()) {
          std::string scratch;
          auto d = zip->Data(e, &scratch, 1 << 20);
          if (!d.ok()) {
            EXPECT_EQ(d.status().message().rfind("t.zip", 0), 0u);
          }
        }
      }
    }
  }
}

// Writes a 16-bit or 32-bit little-endian value at `at`.
void Poke(std::string* s, size_t at, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    (*s)[at + i] = static_cast<char>(v >> (8 * i));
}

TEST(ZipReaderTest, CorruptFieldsGiveNamedErrors) {
  const std::string a = BuildZip({{"a/x", "hello"}});
  const size_t cd = a.find("PK\x01\x02"), eocd = a.find("PK\x05\x06");
  std::string b = a;
  Poke(&b, eocd + 16, 100000, 4);  // central directory offset
  ExpectError(ZipReader::Open(b, "t.zip").status(), StatusCode::kCorruption,
              "central directory (offset 100000");
  b = a;
  Poke(&b, eocd + 10, 50, 2);  // entry count
  ExpectError(ZipReader::Open(b, "t.zip").status(), StatusCode::kCorruption,
              "50 entries cannot fit");
  b = a;
  b[cd + 1] = 'X';
  ExpectError(ZipReader::Open(b, "t.zip").status(), StatusCode::kCorruption,
              "bad signature");
  b = a;
  Poke(&b, cd + 42, 7, 4);  // local header offset
  ExpectError(ZipReader::Open(b, "t.zip").status(), StatusCode::kCorruption,
              "t.zip: zip entry 'a/x': no local header at offset 7");
  b = a;
  Poke(&b, cd + 20, 1000, 4);  // compressed size
  ExpectError(ZipReader::Open(b, "t.zip").status(), StatusCode::kCorruption,
              "1000 bytes at offset 33 run past the end");
  b = a;
  b[30] = 'b';  // local header names "b/x"
  ExpectError(ZipReader::Open(b, "t.zip").status(), StatusCode::kCorruption,
              "names another entry");
  b = a;
  Poke(&b, cd + 20, 0xFFFFFFFF, 4);
  ExpectError(ZipReader::Open(b, "t.zip").status(), StatusCode::kCorruption,
              "no ZIP64 extra field");
  b = a;
  Poke(&b, eocd + 4, 1, 2);
  ExpectError(ZipReader::Open(b, "t.zip").status(), StatusCode::kNotSupported,
              "multi-disk");
}

TEST(ZipReaderTest, DuplicateNamesAreCorruption) {
  ExpectError(
      ZipReader::Open(BuildZip({{"a", "1"}, {"a", "2"}}), "t.zip").status(),
      StatusCode::kCorruption, "zip entry 'a': appears twice");
}

TEST(ZipReaderTest, EntryLevelErrors) {
  const std::string a = BuildZip({{"a/x", "hello"}, {"a/d", "data", true}});
  const size_t cd = a.find("PK\x01\x02");
  const size_t cd2 = a.find("PK\x01\x02", cd + 1);
  std::string b = a;
  Poke(&b, cd + 8, 0x0801, 2);  // encrypted
  ExpectError(ReadEntry(b, "a/x").status(), StatusCode::kNotSupported,
              "t.zip: zip entry 'a/x': is encrypted");
  b = a;
  Poke(&b, cd + 10, 12, 2);  // bzip2
  ExpectError(ReadEntry(b, "a/x").status(), StatusCode::kNotSupported,
              "compression method 12");
  b = a;
  Poke(&b, cd + 24, 4, 4);  // uncompressed size of a stored entry
  ExpectError(ReadEntry(b, "a/x").status(), StatusCode::kCorruption,
              "compressed size 5 but uncompressed size 4");
  b = a;
  Poke(&b, cd + 16, 0x12345678, 4);  // CRC
  ExpectError(ReadEntry(b, "a/x").status(), StatusCode::kCorruption,
              "CRC-32 is 0x3610a686, recorded 0x12345678");
  b = a;
  Poke(&b, cd2 + 24, 5, 4);  // inflated size too large
  ExpectError(ReadEntry(b, "a/d").status(), StatusCode::kCorruption,
              "inflates to 4 bytes, recorded 5");
  b = a;
  Poke(&b, cd2 + 24, 3, 4);  // inflated size too small
  ExpectError(ReadEntry(b, "a/d").status(), StatusCode::kCorruption,
              "zip entry 'a/d': cannot inflate");
  b = a;
  Poke(&b, cd2 + 24, 0xFFFFFFF0, 4);  // a zip bomb's claim
  ExpectError(ReadEntry(b, "a/d").status(), StatusCode::kCorruption,
              "cannot inflate to 4294967280");
  ExpectError(ReadEntry(a, "a/x", 4).status(), StatusCode::kNotSupported,
              "5 bytes is more than the limit of 4");
}

TEST(ZipReaderTest, ZeroCrcMeansNotComputed) {
  ZipBuildOptions o;
  o.zero_crc = true;
  EXPECT_EQ(ReadEntry(BuildZip({{"a", "abc"}}, o), "a").value(), "abc");
}

TEST(ZipReaderTest, ForgedInflatedSizeCostsOnlyWhatInflates) {
  // 5 MiB that deflate cannot shrink, recorded as 3.75 GiB: within deflate's
  // 1032:1 ratio, so only inflating shows the lie. Memory must follow what
  // really inflates (it once allocated the recorded size first). Measured in
  // a child process, whose peak RSS is its own.
  std::string noise(5u << 20, '\0');
  uint64_t x = 88172645463325252ull;
  for (char& c : noise) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = static_cast<char>(x);
  }
  std::string a = BuildZip({{"a/d", noise, true}});
  Poke(&a, a.find("PK\x01\x02") + 24, 0xF0000000u, 4);
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(fds[0]);
    bool failed = !ReadEntry(a, "a/d").ok();
    struct rusage ru;
    ::getrusage(RUSAGE_SELF, &ru);
    long kb = failed ? ru.ru_maxrss : -1;
    ssize_t w = ::write(fds[1], &kb, sizeof(kb));
    ::_exit(w == sizeof(kb) ? 0 : 1);
  }
  ::close(fds[1]);
  long kb = 0;
  ASSERT_EQ(::read(fds[0], &kb, sizeof(kb)), static_cast<ssize_t>(sizeof(kb)));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_GE(kb, 0) << "the forged entry was read";
  EXPECT_LT(kb, 512 * 1024) << "peak RSS " << kb << " KiB";  // not 3.75 GiB
  EXPECT_EQ(ReadEntry(a, "a/d").status().message(),
            "t.zip: zip entry 'a/d': inflates to 5242880 bytes, recorded "
            "4026531840");
}

}  // namespace
}  // namespace lockstep
