#include "cli/nkibench_import.h"

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libs/config/arithmetic.h"
#include "libs/core/file.h"

namespace accelopt::cli {
namespace {

namespace fs = std::filesystem;

// accelopt-algorithm.md §4.5: vector flops, matmul flops, and minimal HBM bytes (fp32, 4 B per element).
const std::map<std::string, std::vector<std::string>>& Formulas() {
  static const auto* formulas = new std::map<std::string, std::vector<std::string>>{
      {"mamba", {"M*C*S*4 + M*C*S*2 + M*C*S*2", "0", "4*(2*C*M + C*S + 2*S*M + C*M)"}},
      {"silu", {"3*M*N", "0", "4*(2*M*N)"}},
      {"add_rmsnorm_matmul", {"6*M*K", "2*M*N*K", "4*(2*M*K + K*N + K + M*N)"}},
      {"matmul_add_rmsnorm", {"6*M*N", "2*M*N*K", "4*(M*K + N*K + M*N + N + M*N)"}},
      {"rmsnorm_matmul", {"4*M*K", "2*M*N*K", "4*(M*K + K*N + M*N)"}},
      {"swiglu", {"5*M*N", "6*M*K*N", "4*(2*M*K + 3*K*N)"}},
      {"matmul", {"0", "2*M*N*K", "4*(M*N + N*K + M*K)"}},
      {"transpose_matmul", {"0", "2*M*N*K", "4*(M*N + N*K + M*K)"}},
      {"gqa_full", {"5*B*QH*N**2", "4*B*QH*N**2*D", "4*(2*B*QH*N*D + 2*B*KH*N*D)"}},
      {"rope_single_freq_apply", {"3*B*H*N*D", "0", "4*(3*B*H*N*D)"}},
      {"bmm", {"0", "2*B*M*N*K", "4*(B*M*N + B*N*K + B*M*K)"}},
      {"bmm_softmax", {"5*B*M*N", "2*B*M*N*K", "4*(B*M*N + B*N*K + B*M*K)"}},
      {"lora", {"M*N", "2*M*N*K + 2*M*K*R + 2*M*N*R", "4*(M*K + K*N + K*R + R*N + M*N)"}},
      {"adamw", {"7*M*N", "0", "4*(5*M*N)"}},
  };
  return *formulas;
}

absl::Status Invalid(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

}  // namespace

std::vector<std::string> NkiBenchRoofline(const std::string& problem) {
  auto it = Formulas().find(problem);
  return it == Formulas().end() ? std::vector<std::string>{} : it->second;
}

absl::StatusOr<NkiBenchImport> ImportNkiBench(const std::string& nkibench_dir, const std::string& out_dir,
                                              const std::string& device) {
  const fs::path root = fs::absolute(nkibench_dir).lexically_normal();
  const std::string summary_path = (root / "summary.json").string();
  auto text = core::ReadFile(summary_path);
  if (!text.ok())
    return absl::NotFoundError(absl::StrCat(summary_path, " not found: is ", nkibench_dir, " an NKIBench folder?"));
  nlohmann::json summary;
  try {
    summary = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::exception& e) {
    return Invalid(summary_path, e.what());
  }
  if (!summary.is_object()) return Invalid(summary_path, "not a JSON object of problems");
  NkiBenchImport result;
  result.suite_path = (fs::path(out_dir) / "suite.yaml").string();
  std::string suite = "# Imported from " + root.string() +
                      " by `accelopt suite import-nkibench`.\nname: nkibench\nconcurrency: 2\nproblems:\n";
  for (const auto& [problem, entry] : summary.items()) {  // nlohmann::json objects iterate in key order
    const std::string where = absl::StrCat(summary_path, ": ", problem);
    if (!entry.is_object() || !entry.contains("cases") || !entry["cases"].is_object()) {
      return Invalid(where, "no \"cases\" object");
    }
    const std::vector<std::string> roofline = NkiBenchRoofline(problem);
    if (roofline.empty()) result.warnings.push_back(problem + ": no roofline formulas, % of peak will be absent");
    for (const auto& [case_id, c] : entry["cases"].items()) {
      const std::string case_where = absl::StrCat(where, " case ", case_id);
      if (!c.contains("values") || !c["values"].is_object() || !c.contains("impls") || !c["impls"].is_array()) {
        return Invalid(case_where, "needs \"values\" and \"impls\"");
      }
      std::map<std::string, double> values;
      std::string parameters;
      for (const auto& [name, value] : c["values"].items()) {
        if (!value.is_number()) return Invalid(case_where, absl::StrCat("value ", name, " is not a number"));
        values[name] = value.get<double>();
        absl::StrAppend(&parameters, "  ", name, ": ", value.dump(), "\n");
      }
      for (size_t i = 0; i < c["impls"].size(); ++i) {
        const nlohmann::json& impl = c["impls"][i];
        if (!impl.contains("task") || !impl.contains("kernel")) {
          return Invalid(case_where, absl::StrCat("impls[", i, "] needs \"task\" and \"kernel\""));
        }
        const fs::path reference = (root / impl["task"].get<std::string>()).lexically_normal();
        const fs::path kernel = (root / impl["kernel"].get<std::string>()).lexically_normal();
        for (const fs::path& p : {reference, kernel}) {
          if (!fs::is_regular_file(p)) return Invalid(case_where, absl::StrCat(p.string(), " is missing"));
        }
        const std::string name = absl::StrCat(problem, "_", case_id, c["impls"].size() > 1 ? absl::StrCat("_", i) : "");
        std::string problem_yaml = absl::StrCat("name: ", name, "\nparameters:\n", parameters);
        if (!roofline.empty()) {
          static const char* kKeys[] = {"vector_flops", "matmul_flops", "hbm_bytes"};
          problem_yaml += "roofline:  # accelopt-algorithm.md section 4.5, fp32\n";
          for (int k = 0; k < 3; ++k) {
            auto v = config::EvaluateArithmetic(roofline[k], values);
            if (!v.ok()) return Invalid(case_where, absl::StrCat("roofline ", kKeys[k], ": ", v.status().message()));
            absl::StrAppend(&problem_yaml, "  ", kKeys[k], ": \"", roofline[k], "\"\n");
          }
        }
        // The suite is self-contained: the job files name copies beside them (job files may only name files
        // under their own directory).
        const std::string reference_copy = reference.filename().string();
        const std::string kernel_copy = "baseline_" + kernel.filename().string();
        const std::string job_yaml =
            absl::StrCat("# NKIBench ", problem, " case ", case_id, ", optimized offline with the builtin optimizer.\n",
                         "name: nkibench-", name, "\npreset: small\nproblem: {reference: \"", reference_copy,
                         "\", kernel: \"", kernel_copy, "\", metadata: problem.yaml}\ndevice: ", device,
                         "\nmodels:\n  planner: {provider: builtin}\n  executor: {provider: builtin}\n"
                         "  summarizer: {provider: builtin}\n");
        const fs::path dir = fs::path(out_dir) / name;
        std::error_code ec;
        fs::create_directories(dir, ec);
        if (ec) return absl::FailedPreconditionError(absl::StrCat("cannot create ", dir.string(), ": ", ec.message()));
        if (absl::Status s = core::WriteFileAtomic((dir / "problem.yaml").string(), problem_yaml); !s.ok()) return s;
        if (absl::Status s = core::WriteFileAtomic((dir / "job.yaml").string(), job_yaml); !s.ok()) return s;
        for (const auto& [from, to] : {std::pair{reference, reference_copy}, std::pair{kernel, kernel_copy}}) {
          fs::copy_file(from, dir / to, fs::copy_options::overwrite_existing, ec);
          if (ec) return absl::FailedPreconditionError(absl::StrCat("cannot copy ", from.string(), ": ", ec.message()));
        }
        absl::StrAppend(&suite, "  - {name: ", name, ", job: ", name, "/job.yaml}\n");
        result.problems.push_back(name);
      }
    }
  }
  if (result.problems.empty()) return Invalid(summary_path, "no problems");
  if (absl::Status s = core::WriteFileAtomic(result.suite_path, suite); !s.ok()) return s;
  return result;
}

}  // namespace accelopt::cli
