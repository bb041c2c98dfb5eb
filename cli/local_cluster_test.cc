#include "cli/local_cluster.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "libs/core/file.h"
#include "libs/testing/scratch_dir.h"

namespace accelopt::cli {
namespace {

class ClusterServiceAddressTest : public ::testing::Test {
 protected:
  void WriteState(const std::string& json) { ASSERT_TRUE(core::WriteFileAtomic(dir_ + "/cluster.json", json).ok()); }
  testing::ScratchDir scratch_;
  const std::string dir_ = scratch_.path();
};

TEST_F(ClusterServiceAddressTest, AnExplicitServerWins) {
  WriteState(R"({"services": [{"name": "memory", "grpc_address": "127.0.0.1:1"}]})");
  EXPECT_EQ(*ClusterServiceAddress("host:9", dir_, "memory", "fallback:0"), "host:9");
}

TEST_F(ClusterServiceAddressTest, TheRecordedServiceIsUsed) {
  WriteState(R"({"services": [{"name": "orchestrator", "grpc_address": "127.0.0.1:1"},
                              {"name": "memory", "grpc_address": "127.0.0.1:2", "future_field": 3}]})");
  EXPECT_EQ(*ClusterServiceAddress("", dir_, "orchestrator", "fallback:0"), "127.0.0.1:1");
  EXPECT_EQ(*ClusterServiceAddress("", dir_, "memory", "fallback:0"), "127.0.0.1:2");
  EXPECT_EQ(*ClusterServiceAddress("", dir_, "planner", "fallback:0"), "fallback:0");
}

TEST_F(ClusterServiceAddressTest, NoRecordedClusterGivesTheFallback) {
  EXPECT_EQ(*ClusterServiceAddress("", dir_, "memory", "fallback:0"), "fallback:0");
}

TEST_F(ClusterServiceAddressTest, ACorruptRecordIsDataLossNamingTheFile) {
  WriteState("{not json");
  auto address = ClusterServiceAddress("", dir_, "memory", "fallback:0");
  EXPECT_TRUE(absl::IsDataLoss(address.status())) << address.status();
  EXPECT_NE(address.status().message().find(dir_ + "/cluster.json"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::cli
