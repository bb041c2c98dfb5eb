#include "services/planner/planner_config.h"

#include <gtest/gtest.h>

namespace accelopt::planner {
namespace {

TEST(PlannerConfigTest, DefaultsAreValid) {
  v1::PlannerConfig c;
  ApplyPlannerDefaults(&c);
  EXPECT_TRUE(ValidatePlannerConfig(c).ok());
  EXPECT_EQ(c.llm().max_concurrency_per_endpoint(), 16);
}

TEST(PlannerConfigTest, RejectsNegativePricesNamingTheModel) {
  v1::PlannerConfig c;
  ApplyPlannerDefaults(&c);
  (*c.mutable_llm()->mutable_prices())["gpt-x"].set_prompt_usd_per_mtok(-1);
  absl::Status s = ValidatePlannerConfig(c);
  EXPECT_NE(s.message().find("llm.prices[gpt-x]"), std::string::npos) << s;
}

}  // namespace
}  // namespace accelopt::planner
