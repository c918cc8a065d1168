#include "lockstep/core/markup.h"

#include <gtest/gtest.h>

#include <string>

#include "lockstep/core/log.h"

namespace lockstep {
namespace {

TEST(MarkupTest, EscapesEntitiesAndControlCharacters) {
  EXPECT_EQ(EscapeMarkup("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(EscapeMarkup("</script><img onerror=x>"),
            "&lt;/script&gt;&lt;img onerror=x&gt;");
  EXPECT_EQ(EscapeMarkup(std::string("t\tn\nr\rz\x01\x1f", 9)), "t\tn\nr\rz??");
  EXPECT_EQ(EscapeMarkup("\xc3\xa9"), "\xc3\xa9");  // UTF-8 passes through
  EXPECT_EQ(EscapeMarkup(""), "");
}

// Issue 32: U+202E (right-to-left override) and U+2028 (line separator)
// from a dump reached the terminal and the HTML unescaped.
TEST(MarkupTest, RightToLeftOverrideAndLineSeparatorAreShownNotObeyed) {
  const std::string rlo = "\xe2\x80\xae", ls = "\xe2\x80\xa8";
  EXPECT_EQ(EscapeMarkup("evil" + rlo + "fdp.exe" + ls + "x"),
            "evil\\u202efdp.exe\\u2028x");
  EXPECT_EQ(EscapeControl("a" + rlo + "b\x1b[2Jc\x07"),
            "a\\u202eb\\x1b[2Jc\\x07");
  EXPECT_EQ(EscapeControl("\xe2\x81\xa6"
                          "i"
                          "\xe2\x80\x8f"),
            "\\u2066i\\u200f");
  // Other characters of the same block pass: an ellipsis, a dash, quotes.
  EXPECT_EQ(EscapeControl("\xe2\x80\xa6 \xe2\x80\x94 \xe2\x80\x9c"),
            "\xe2\x80\xa6 \xe2\x80\x94 \xe2\x80\x9c");
  // Line breaks kept where a writer asks (a CSV cell may hold them).
  EXPECT_EQ(EscapeControl("a\nb\tc\x1b", true), "a\nb\tc\\x1b");
  EXPECT_FALSE(NeedsControlEscape("plain\ttext\n"));
  EXPECT_TRUE(NeedsControlEscape("bell\x07"));
}

}  // namespace
}  // namespace lockstep
