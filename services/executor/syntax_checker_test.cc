#include "services/executor/syntax_checker.h"

#include <gtest/gtest.h>

namespace accelopt::executor {
namespace {

TEST(PythonSyntaxCheckerTest, AcceptsValidCode) {
  EXPECT_TRUE(PythonSyntaxChecker().Check("def kernel(a):\n    return a\n").ok());
}

TEST(PythonSyntaxCheckerTest, ReportsLineAndMessage) {
  absl::Status s = PythonSyntaxChecker().Check("def kernel(a):\n    return a\n\ndef broken(:\n    pass\n");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message().rfind("line 4: ", 0), 0u) << s;
}

TEST(PythonSyntaxCheckerTest, HandlesSourcesLargerThanAPipeBuffer) {
  std::string big;
  for (int i = 0; i < 20000; ++i) big += "x_" + std::to_string(i) + " = " + std::to_string(i) + "\n";
  EXPECT_TRUE(PythonSyntaxChecker().Check(big).ok());
  EXPECT_EQ(PythonSyntaxChecker().Check(big + "if\n").code(), absl::StatusCode::kInvalidArgument);
}

TEST(PythonSyntaxCheckerTest, MissingInterpreterIsUnavailable) {
  EXPECT_EQ(PythonSyntaxChecker("/nonexistent/python3").Check("x = 1").code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace accelopt::executor
