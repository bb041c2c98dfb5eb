#include "libs/config/config_loader.h"

#include <gtest/gtest.h>

#include "accelopt/v1/config.pb.h"
#include "accelopt/v1/job.pb.h"

namespace accelopt::config {
namespace {

TEST(ConfigLoaderTest, ParsesYamlWithNestedMessagesListsAndFriendlyEnums) {
  v1::OrchestratorConfig cfg;
  ASSERT_TRUE(ParseConfigText(R"(
server: {grpc_address: "127.0.0.1:7000", drain_seconds: 2.5}
profiler_addresses: [a:1, b:2]
max_dispatch_attempts: 5
)",
                              "test.yaml", &cfg)
                  .ok());
  EXPECT_EQ(cfg.server().grpc_address(), "127.0.0.1:7000");
  EXPECT_DOUBLE_EQ(cfg.server().drain_seconds(), 2.5);
  ASSERT_EQ(cfg.profiler_addresses_size(), 2);
  EXPECT_EQ(cfg.profiler_addresses(1), "b:2");
  EXPECT_EQ(cfg.max_dispatch_attempts(), 5);

  v1::ProfilerConfig p;
  ASSERT_TRUE(ParseConfigText("device: sim-trn2\nslots: 2\n", "p.yaml", &p).ok());
  EXPECT_EQ(p.device(), v1::DEVICE_SIM_TRN2);
}

TEST(ConfigLoaderTest, ParsesJson) {
  v1::MemoryConfig cfg;
  ASSERT_TRUE(ParseConfigText(R"({"data_dir": "/tmp/m", "server": {"log_level": "debug"}})", "m.json", &cfg).ok());
  EXPECT_EQ(cfg.data_dir(), "/tmp/m");
  EXPECT_EQ(cfg.server().log_level(), "debug");
}

TEST(ConfigLoaderTest, UnknownKeyIsRejectedWithItsFullPath) {
  v1::PlannerConfig cfg;
  absl::Status s = ParseConfigText("server:\n  grpc_adress: x\n", "planner.yaml", &cfg);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("unknown key 'server.grpc_adress'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("planner.yaml"), std::string::npos);
}

TEST(ConfigLoaderTest, NonScalarMappingKeysAreRejected) {
  v1::PlannerConfig cfg;
  for (const char* text : {"? {a: b}\n: x\n", "server:\n  ? [1, 2]\n  : x\n"}) {
    absl::Status s = ParseConfigText(text, "planner.yaml", &cfg);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(s.message().find("a mapping key must be a plain name"), std::string::npos) << s;
  }
}

TEST(ConfigLoaderTest, WrongTypesAndBadEnumsNameTheKey) {
  v1::ProfilerConfig cfg;
  absl::Status s = ParseConfigText("slots: many\n", "p.yaml", &cfg);
  EXPECT_NE(s.message().find("'slots'"), std::string::npos) << s;
  s = ParseConfigText("device: tpu\n", "p.yaml", &cfg);
  EXPECT_NE(s.message().find("'device'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("sim-trn1"), std::string::npos) << s;
  s = ParseConfigText("server: [1, 2]\n", "p.yaml", &cfg);
  EXPECT_NE(s.message().find("'server'"), std::string::npos) << s;
}

TEST(ConfigLoaderTest, SyntaxErrorNamesTheLine) {
  v1::ProfilerConfig cfg;
  absl::Status s = ParseConfigText("slots: 1\n  bad: [\n", "p.yaml", &cfg);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("line"), std::string::npos) << s;
}

TEST(ConfigLoaderTest, FreeFormStructKeepsTypes) {
  v1::ModelSpec spec;
  ASSERT_TRUE(ParseConfigText("extra_body: {top_p: 0.9, stop: [a], flag: true, name: x}\n", "m.yaml", &spec).ok());
  const auto& f = spec.extra_body().fields();
  EXPECT_DOUBLE_EQ(f.at("top_p").number_value(), 0.9);
  EXPECT_TRUE(f.at("flag").bool_value());
  EXPECT_EQ(f.at("name").string_value(), "x");
  EXPECT_EQ(f.at("stop").list_value().values(0).string_value(), "a");
}

TEST(ConfigLoaderTest, AliasesThatExpandBeyondTheBoundAreRefused) {
  // nine levels of nine aliases: 9^9 copies of one string
  std::string text = "a0: &a0 xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n";
  for (int level = 1; level <= 9; ++level) {
    text += "a" + std::to_string(level) + ": &a" + std::to_string(level) + " [";
    for (int i = 0; i < 9; ++i) text += (i ? ", *a" : "*a") + std::to_string(level - 1);
    text += "]\n";
  }
  v1::ModelSpec spec;
  absl::Status s = ParseConfigText(
      "extra_body:\n" +
          [&] {
            std::string indented;
            for (size_t start = 0, end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
              indented += "  " + text.substr(start, end - start + 1);
            }
            return indented;
          }(),
      "bomb.yaml", &spec);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("bomb.yaml: expands to more than"), std::string::npos) << s;
}

TEST(ConfigLoaderTest, ARepeatedKeyIsRefusedWithItsPath) {
  v1::PlannerConfig cfg;
  absl::Status s = ParseConfigText("server:\n  grpc_address: a\n  grpc_address: b\n", "planner.yaml", &cfg);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("key 'server.grpc_address'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("the key appears twice"), std::string::npos) << s;
  v1::ModelSpec spec;
  s = ParseConfigText("extra_body: {top_p: 0.9, top_p: 0.1}\n", "m.yaml", &spec);
  EXPECT_NE(s.message().find("the key appears twice"), std::string::npos) << s;
}

TEST(ConfigLoaderTest, ExtraKeysAreHandedBackInsteadOfParsed) {
  v1::JobSpec spec;
  auto extra =
      ParseConfigTextWithExtraKeys("name: x\nproblem: {file: a.py, name: p}\n", "j.yaml", {"problem.file"}, &spec);
  ASSERT_TRUE(extra.ok()) << extra.status();
  EXPECT_EQ(*extra, (std::map<std::string, std::string>{{"problem.file", "a.py"}}));
  EXPECT_EQ(spec.name(), "x");
  EXPECT_EQ(spec.problem().name(), "p");

  absl::Status s = ParseConfigTextWithExtraKeys("problem: {file: [a]}\n", "j.yaml", {"problem.file"}, &spec).status();
  EXPECT_NE(s.message().find("'problem.file'"), std::string::npos) << s;
  s = ParseConfigTextWithExtraKeys("problem: {fiel: a}\n", "j.yaml", {"problem.file"}, &spec).status();
  EXPECT_NE(s.message().find("unknown key 'problem.fiel'"), std::string::npos) << s;
  const std::string message(s.message());
  EXPECT_NE(message.find("file", message.find("known keys here")), std::string::npos) << s;
  s = ParseConfigTextWithExtraKeys("file: a\n", "j.yaml", {"problem.file"}, &spec).status();
  EXPECT_NE(s.message().find("unknown key 'file'"), std::string::npos) << s;
}

}  // namespace
}  // namespace accelopt::config
