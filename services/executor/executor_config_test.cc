#include "services/executor/executor_config.h"

#include <gtest/gtest.h>

namespace accelopt::executor {
namespace {

TEST(ExecutorConfigTest, DefaultsAreValid) {
  v1::ExecutorConfig c;
  ApplyExecutorDefaults(&c);
  EXPECT_TRUE(ValidateExecutorConfig(c).ok());
  EXPECT_EQ(c.llm().max_concurrency_per_endpoint(), 16);
}

TEST(ExecutorConfigTest, RejectsNegativePricesNamingTheModel) {
  v1::ExecutorConfig c;
  ApplyExecutorDefaults(&c);
  (*c.mutable_llm()->mutable_prices())["gpt-x"].set_prompt_usd_per_mtok(-1);
  absl::Status s = ValidateExecutorConfig(c);
  EXPECT_NE(s.message().find("llm.prices[gpt-x]"), std::string::npos) << s;
}

}  // namespace
}  // namespace accelopt::executor
