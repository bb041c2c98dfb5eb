#include "libs/config/arithmetic.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace accelopt::config {
namespace {

using ::testing::HasSubstr;

const std::map<std::string, double> kParams = {{"M", 4096}, {"N", 2048}, {"K", 512}};

TEST(EvaluateArithmetic, NumbersAndNames) {
  EXPECT_DOUBLE_EQ(*EvaluateArithmetic("25165824", kParams), 25165824);
  EXPECT_DOUBLE_EQ(*EvaluateArithmetic("1.5e3", kParams), 1500);
  EXPECT_DOUBLE_EQ(*EvaluateArithmetic("3*M*N", kParams), 3.0 * 4096 * 2048);
  EXPECT_DOUBLE_EQ(*EvaluateArithmetic(" 4 * (M*K + K*N) ", kParams), 4.0 * (4096 * 512 + 512 * 2048));
}

TEST(EvaluateArithmetic, PrecedenceFollowsPython) {
  EXPECT_DOUBLE_EQ(*EvaluateArithmetic("2+3*4", {}), 14);
  EXPECT_DOUBLE_EQ(*EvaluateArithmetic("2**3**2", {}), 512);  // right-associative
  EXPECT_DOUBLE_EQ(*EvaluateArithmetic("-2**2", {}), -4);     // ** binds tighter than unary minus
  EXPECT_DOUBLE_EQ(*EvaluateArithmetic("2*-3", {}), -6);
  EXPECT_DOUBLE_EQ(*EvaluateArithmetic("7//2", {}), 3);
  EXPECT_DOUBLE_EQ(*EvaluateArithmetic("7/2", {}), 3.5);
  EXPECT_DOUBLE_EQ(*EvaluateArithmetic("10-4-3", {}), 3);
}

TEST(EvaluateArithmetic, RejectsWhatIsNotArithmetic) {
  EXPECT_THAT(EvaluateArithmetic("3*X", kParams).status().message(), HasSubstr("unknown name 'X'"));
  EXPECT_THAT(EvaluateArithmetic("__import__('os')", kParams).status().message(), HasSubstr("unknown name"));
  EXPECT_THAT(EvaluateArithmetic("M.real", kParams).status().message(), HasSubstr("unexpected character"));
  EXPECT_THAT(EvaluateArithmetic("(M", kParams).status().message(), HasSubstr("missing ')'"));
  EXPECT_THAT(EvaluateArithmetic("M/0", kParams).status().message(), HasSubstr("division by zero"));
  EXPECT_THAT(EvaluateArithmetic("", kParams).status().message(), HasSubstr("unexpected end"));
  EXPECT_THAT(EvaluateArithmetic("10**400", kParams).status().message(), HasSubstr("not finite"));
}

}  // namespace
}  // namespace accelopt::config
