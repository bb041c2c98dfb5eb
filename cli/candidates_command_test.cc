#include "cli/candidates_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/json_output.h"
#include "libs/report/report_fixture.h"

namespace accelopt::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(CandidatesTable, OneAlignedRowPerCandidate) {
  const auto f = report::testing::SmallJob();
  const std::string table = CandidatesTable(f.candidates);
  EXPECT_EQ(std::count(table.begin(), table.end(), '\n'), 1 + static_cast<long>(f.candidates.size()));
  EXPECT_THAT(table, HasSubstr("CANDIDATE"));
  EXPECT_THAT(table, HasSubstr("(baseline)"));
  EXPECT_THAT(table, HasSubstr("COMPILE_ERROR"));
  EXPECT_THAT(table, HasSubstr("5.0000"));  // c4's latency
  EXPECT_THAT(table, HasSubstr("2.000x"));  // c4 against the baseline
  EXPECT_THAT(table, HasSubstr("40.0%"));   // c4's percentage of peak
  // The verdict column starts at the same offset on every line.
  std::vector<size_t> offsets;
  for (size_t line = 0, at = 0; at < table.size(); at = table.find('\n', at) + 1, ++line) {
    const std::string row = table.substr(at, table.find('\n', at) - at);
    offsets.push_back(row.find(line == 0                                                     ? "VERDICT"
                               : f.candidates[line - 1].result().verdict() == v1::VERDICT_OK ? "OK"
                                                                                             : "_"));
  }
  EXPECT_EQ(offsets[0], offsets[1]);
}

TEST(CandidatesJson, SortedKeysAndNoSources) {
  const auto f = report::testing::SmallJob();
  const std::string text = JsonText(CandidatesJson(f.candidates), /*pretty=*/false);
  EXPECT_THAT(text, HasSubstr("\"candidate_id\":\"c4\""));
  EXPECT_THAT(text, Not(HasSubstr("load_tiled")));
  EXPECT_EQ(CandidatesJson(f.candidates).size(), f.candidates.size());
}

}  // namespace
}  // namespace accelopt::cli
