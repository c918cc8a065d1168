#include "lockstep/core/markup.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lockstep
