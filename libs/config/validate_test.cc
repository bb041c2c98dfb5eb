#include "libs/config/validate.h"

#include <gtest/gtest.h>

namespace accelopt::config {
namespace {

TEST(ValidateTest, DefaultsAreValid) {
  v1::ServerConfig s;
  ApplyServerDefaults(&s);
  EXPECT_TRUE(ValidateServerConfig(s).ok());
  EXPECT_EQ(s.grpc_address(), "127.0.0.1:0");
  EXPECT_TRUE(s.reflection());
}

TEST(ValidateTest, BadAddressNamesTheField) {
  v1::ServerConfig s;
  ApplyServerDefaults(&s);
  s.set_admin_address("localhost:99999");
  absl::Status st = ValidateServerConfig(s);
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("server.admin_address"), std::string::npos);
}

TEST(ValidateTest, BadLogLevelIsRejected) {
  v1::ServerConfig s;
  ApplyServerDefaults(&s);
  s.set_log_level("chatty");
  EXPECT_NE(ValidateServerConfig(s).message().find("server.log_level"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::config
