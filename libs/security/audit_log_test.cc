#include "libs/security/audit_log.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "libs/core/file.h"
#include "libs/testing/scratch_dir.h"
#include "nlohmann/json.hpp"

namespace accelopt::security {
namespace {

TEST(AuditLogTest, OneJsonLinePerActionWithPrincipalTargetAndOutcome) {
  testing::ScratchDir scratch;
  const std::string path = scratch.Path("audit.log");
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
}

TEST(AuditLogTest, FieldsACallerChoosesAreBounded) {
  // an unauthenticated call with a 4 MiB job id adds one short line, not megabytes
  testing::ScratchDir scratch;
  const std::string path = scratch.Path("audit.log");
  const std::string id(4 << 20, 'U');
  {
    auto log = AuditLog::Open(path, "orchestrator");
    ASSERT_TRUE(log.ok()) << log.status();
    (*log)->Record("cancel", nullptr, "job/" + id, absl::NotFoundError("job " + id + " not found"), id);
  }
  auto text = core::ReadFile(path);
  ASSERT_TRUE(text.ok());
  EXPECT_LT(text->size(), 4096u);
  nlohmann::json line = nlohmann::json::parse(text->substr(0, text->find('\n')));
  EXPECT_EQ(line["target"].get<std::string>().substr(0, 8), "job/UUUU");
  EXPECT_NE(line["target"].get<std::string>().find("bytes more)"), std::string::npos);
  EXPECT_NE(line["error"].get<std::string>().find("bytes more)"), std::string::npos);
}

}  // namespace
}  // namespace accelopt::security
