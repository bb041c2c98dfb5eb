#include "cli/suite_command.h"

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "cli/job_commands.h"
#include "cli/json_output.h"
#include "cli/nkibench_import.h"
#include "cli/suite_results.h"
#include "cli/suite_run.h"
#include "libs/core/file.h"

namespace accelopt::cli {
namespace {

namespace fs = std::filesystem;

int RunSuiteRun(const std::vector<std::string>& argv) {
  return WithJobService(
      argv, {"out"}, {"json"}, 1, "SUITE.yaml", [](const Args& args, v1::JobService::Stub& stub, const std::string&) {
        auto suite = LoadSuiteFile(args.positional[0]);
        if (!suite.ok()) return Fail(std::string(suite.status().message()));
        const std::string out = args.Get("out", (fs::path("suite-results") / suite->name).string());
        // With --json the progress goes to stderr and stdout gets results.json on one line.
        const bool json = args.Has("json");
        const absl::Status ran = RunSuite(*suite, out, stub, json ? std::cerr : std::cout);
        if (json && (ran.ok() || absl::IsAborted(ran))) {
          auto results = core::ReadFile((fs::path(out) / "results.json").string());
          if (results.ok()) std::cout << JsonText(nlohmann::json::parse(*results), /*pretty=*/false) << "\n";
        }
        if (!ran.ok()) return Fail(std::string(ran.message()));
        if (json) return 0;
        auto table = core::ReadFile((fs::path(out) / "results.md").string());
        if (table.ok()) std::cout << "\n" << *table;
        std::cout << "\nresults: " << fs::absolute(fs::path(out) / "results.md").lexically_normal().string()
                  << "\nreport: " << fs::absolute(fs::path(out) / "report.html").lexically_normal().string()
                  << std::endl;
        return 0;
      });
}

// A suite's results: a results.json file or the directory holding it.
absl::StatusOr<std::vector<SuiteRow>> LoadResults(const std::string& path, std::string* name) {
  const fs::path file = fs::is_directory(path) ? fs::path(path) / "results.json" : fs::path(path);
  auto text = core::ReadFile(file.string());
  if (!text.ok()) return text.status();
  try {
    const nlohmann::json json = nlohmann::json::parse(*text);
    *name = json.value("suite", file.parent_path().filename().string());
    auto rows = SuiteRowsFromJson(json);
    if (!rows.ok()) return absl::InvalidArgumentError(absl::StrCat(file.string(), ": ", rows.status().message()));
    return rows;
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(file.string(), ": ", e.what()));
  }
}

int RunSuiteCompare(const std::vector<std::string>& argv) {
  auto args = ParseArgs(argv, {}, {"json"});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (args->positional.size() != 2) return UsageError("suite compare needs two result directories A B");
  std::string name_a, name_b;
  auto a = LoadResults(args->positional[0], &name_a);
  if (!a.ok()) return Fail(std::string(a.status().message()));
  auto b = LoadResults(args->positional[1], &name_b);
  if (!b.ok()) return Fail(std::string(b.status().message()));
  if (name_a == name_b) name_a += " (A)", name_b += " (B)";
  if (args->Has("json")) {
    std::cout << JsonText(CompareJson(name_a, *a, name_b, *b), /*pretty=*/false) << "\n";
  } else {
    std::cout << CompareMarkdown(name_a, *a, name_b, *b) << std::flush;
  }
  return 0;
}

int RunImport(const std::vector<std::string>& argv) {
  auto args = ParseArgs(argv, {"out", "device"}, {"json"});
  if (!args.ok()) return UsageError(std::string(args.status().message()));
  if (args->positional.size() != 1) return UsageError("suite import-nkibench needs the NKIBench folder");
  auto imported =
      ImportNkiBench(args->positional[0], args->Get("out", "nkibench-suite"), args->Get("device", "sim-trn1"));
  if (!imported.ok()) return Fail(std::string(imported.status().message()));
  for (const std::string& w : imported->warnings) std::cerr << "accelopt: warning: " << w << "\n";
  const std::string suite_path = fs::absolute(imported->suite_path).lexically_normal().string();
  if (args->Has("json")) {
    std::cout << JsonText({{"suite", suite_path}, {"problems", imported->problems}, {"warnings", imported->warnings}},
                          /*pretty=*/false)
              << "\n";
    return 0;
  }
  std::cout << "imported " << imported->problems.size() << " problems into "
            << fs::absolute(imported->suite_path).lexically_normal().string() << "\nrun it with: accelopt suite run "
            << imported->suite_path << std::endl;
  return 0;
}

int RunSuiteCommand(const std::vector<std::string>& argv) {
  if (argv.empty()) return UsageError("suite needs a verb: run, compare or import-nkibench");
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  if (argv[0] == "run") return RunSuiteRun(rest);
  if (argv[0] == "compare") return RunSuiteCompare(rest);
  if (argv[0] == "import-nkibench") return RunImport(rest);
  return UsageError("unknown suite verb '" + argv[0] + "' (run, compare, import-nkibench)");
}

}  // namespace

Command SuiteCommand() {
  return {"suite",
          "suite run SUITE.yaml [--out DIR] [--json] [--server ADDR] [--data-dir DIR]\n"
          "      Run every problem of the suite as a job (bounded concurrency, resumable from DIR/state.json);\n"
          "      write results.md, results.json and report.html into DIR (default suite-results/NAME).\n"
          "      Exit 1 (after writing them) when a problem's job did not succeed.\n"
          "  suite compare A B [--json]\n"
          "      Two suite runs side by side (result directories or results.json files), with geometric means.\n"
          "  suite import-nkibench PATH [--out DIR] [--device DEV] [--json]\n"
          "      Turn an NKIBench folder (summary.json, reference/, kernels/) into a suite in DIR (default\n"
          "      nkibench-suite) with the paper's roofline formulas.",
          RunSuiteCommand};
}

}  // namespace accelopt::cli
