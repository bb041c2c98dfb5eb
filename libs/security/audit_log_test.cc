#include "libs/security/audit_log.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "libs/core/file.h"
#include "nlohmann/json.hpp"

namespace accelopt::security {
namespace {

TEST(AuditLogTest, OneJsonLinePerActionWithPrincipalTargetAndOutcome) {
  std::string path = (std::filesystem::temp_directory_path() / ("audit-" + std::to_string(getpid()))).string();
  std::filesystem::remove(path);
  {
    auto log = AuditLog::Open(path, "orchestrator");
    ASSERT_TRUE(log.ok()) << log.status();
    Principal alice{"team-a", Role::kSubmitter, "token:1a2b3c4d"};
    (*log)->Record("submit", &alice, "job/j-1", absl::OkStatus());
    (*log)->Record("cancel", &alice, "job/j-2", absl::PermissionDeniedError("job j-2 belongs to another tenant"));
    (*log)->Record("authenticate", nullptr, "accelopt.v1.JobService/ListJobs", absl::UnauthenticatedError("unknown"));
  }
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  auto text = core::ReadFile(path);
  ASSERT_TRUE(text.ok());
  std::vector<nlohmann::json> lines;
  size_t start = 0;
  for (size_t end; (end = text->find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(nlohmann::json::parse(text->substr(start, end - start)));
  }
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0]["action"], "submit");
  EXPECT_EQ(lines[0]["tenant"], "team-a");
  EXPECT_EQ(lines[0]["outcome"], "OK");
  EXPECT_EQ(lines[1]["outcome"], "PERMISSION_DENIED");
  EXPECT_EQ(lines[1]["target"], "job/j-2");
  EXPECT_EQ(lines[2]["principal"], "unauthenticated");
  EXPECT_EQ(lines[2]["outcome"], "UNAUTHENTICATED");
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace accelopt::security
