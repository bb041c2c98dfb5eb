#include "services/profiler/harness_result.h"

#include <gtest/gtest.h>

namespace accelopt::profiler {
namespace {

TEST(HarnessResultTest, ParsesAFullResult) {
  auto r = ParseHarnessResult(R"({"verdict": "INCORRECT", "message": "relative L2 error 0.5 > 2e-05",
      "line": 0, "seeds_checked": 2, "max_rel_l2": 0.5, "instructions": 42, "trace": null,
      "problem": {"name": "silu", "tolerance": 2e-5,
                  "roofline": {"vector_flops": 3.0, "matmul_flops": 0, "hbm_bytes": 8.0}},
      "wall_seconds": 0.3})");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->verdict, v1::VERDICT_INCORRECT);
  EXPECT_EQ(r->seeds_checked, 2);
  EXPECT_EQ(r->instructions, 42);
  EXPECT_FALSE(r->fresh_rel_l2.has_value());
  EXPECT_TRUE(r->trace_path.empty());
  ASSERT_TRUE(r->roofline.has_value());
  EXPECT_DOUBLE_EQ(r->roofline->hbm_bytes(), 8.0);
}

TEST(HarnessResultTest, TheFreshRunsErrorIsKeptWhenItWasCompared) {
  auto r = ParseHarnessResult(R"({"verdict": "OK", "seeds_checked": 5, "max_rel_l2": 1e-7, "fresh_rel_l2": 3e-7})");
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->fresh_rel_l2.has_value());
  EXPECT_DOUBLE_EQ(*r->fresh_rel_l2, 3e-7);
}

TEST(HarnessResultTest, RejectsMissingOrUnknownVerdict) {
  EXPECT_FALSE(ParseHarnessResult("{}").ok());
  EXPECT_FALSE(ParseHarnessResult(R"({"verdict": "GREAT"})").ok());
  EXPECT_FALSE(ParseHarnessResult("not json").ok());
}

TEST(HarnessResultTest, ViolationMarkerGivesLineAndDetail) {
  SandboxViolation v = ParseViolationMarker(R"({"event": "socket.connect", "detail": "socket.connect", "line": 7})");
  EXPECT_EQ(v.line, 7);
  EXPECT_EQ(v.detail, "socket.connect");
  EXPECT_EQ(ParseViolationMarker("garbage").detail, "unknown operation");
}

}  // namespace
}  // namespace accelopt::profiler
