#include "services/memory/memory_config.h"

#include <gtest/gtest.h>

namespace accelopt::memory {
namespace {

TEST(MemoryConfigTest, DefaultsAreValid) {
  v1::MemoryConfig c;
  ApplyMemoryDefaults(&c);
  EXPECT_TRUE(ValidateMemoryConfig(c).ok());
  EXPECT_EQ(c.data_dir(), "./data/memory");
}

TEST(MemoryConfigTest, RejectsZeroAttemptsNamingTheField) {
  v1::MemoryConfig c;
  ApplyMemoryDefaults(&c);
  c.mutable_llm()->set_max_attempts(-2);
  EXPECT_NE(ValidateMemoryConfig(c).message().find("llm.max_attempts"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::memory
