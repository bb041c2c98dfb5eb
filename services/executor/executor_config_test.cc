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
  v1::LlmEndpoint* endpoint = c.mutable_llm()->add_endpoints();
  endpoint->set_name("vllm");
  endpoint->set_base_url("http://vllm:8000/v1");
  endpoint->add_models()->set_name("gpt-x");
  endpoint->mutable_models(0)->mutable_price()->set_prompt_usd_per_mtok(-1);
  absl::Status s = ValidateExecutorConfig(c);
  EXPECT_NE(s.message().find("llm.endpoints[0].models[0].price"), std::string::npos) << s;
}

}  // namespace
}  // namespace accelopt::executor
