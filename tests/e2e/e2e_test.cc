// End-to-end tests of the whole cluster as real processes: the LLM double scripted to answer with faster,
// slower and wrong variants of the silu example, two profiler workers on sim-trn1, and faults (orchestrator
// kill -9, a worker killed mid-profile, 30% failing LLM calls, cancel).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "libs/core/file.h"
#include "libs/testing/wait_until.h"
#include "tests/e2e/e2e_cluster.h"
#include "tests/llm_double/llm_double.h"

namespace accelopt::e2e {
namespace {

using namespace std::chrono_literals;

constexpr char kPlannerPrompt[] = "you propose how to make it";
constexpr char kSummarizerPrompt[] = "learn from measured experiments";

std::string Example(const std::string& path) { return *core::ReadFile(kSourceDir + "/examples/silu/" + path); }

// The baseline with [128, 32] tiles: 16 times the instructions and DMAs of 128-byte rows, which move far fewer
// bytes per descriptor; well over 15% slower, so the search learns from it.
std::string NarrowKernel() {
  return R"(import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        for j in nl.affine_range(N // 32):
            x_tile = nl.load(x[i * 128:(i + 1) * 128, j * 32:(j + 1) * 32])
            sig = nl.sigmoid(x_tile)
            y = nl.multiply(x_tile, sig)
            nl.store(out[i * 128:(i + 1) * 128, j * 32:(j + 1) * 32], value=y)
    return out
)";
}

// The baseline with the product on GpSimd (what an LLM might propose to offload VectorE): correct; on trn1 no
// faster, since VectorE and GpSimd share the SBUF port.
std::string PoolKernel() {
  return absl::StrReplaceAll(
      Example("kernel.py"),
      {{"import neuronxcc.nki.language as nl", "import neuronxcc.nki.isa as nisa\nimport neuronxcc.nki.language as nl"},
       {"nl.multiply(x_tile, sig)", "nisa.tensor_tensor(x_tile, sig, op=nl.multiply, engine=nisa.gpsimd_engine)"}});
}

// Forgets the sigmoid: INCORRECT.
std::string WrongKernel() {
  return R"(import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def kernel(x):
    M, N = x.shape
    out = nl.ndarray((M, N), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(M // 128):
        for j in nl.affine_range(N // 512):
            x_tile = nl.load(x[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512])
            nl.store(out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], value=x_tile)
    return out
)";
}

// The baseline, but importing it takes `seconds` (a profile long enough to kill its worker mid-way). NKI's
// static rules allow no `time` module: it waits on numpy's clock.
std::string SleepyKernel(int seconds) {
  return absl::StrCat("import numpy as np\nuntil = np.datetime64('now') + np.timedelta64(", seconds,
                      ", 's')\nwhile np.datetime64('now') < until:\n    pass\n", Example("kernel.py"));
}

struct Rule {
  std::string match;
  int times;
  std::string content;
};

// An executor answer: the kernel in one code block, made unique per request so no two samples share a hash.
std::string CodeBlock(const std::string& source) {
  return absl::StrCat("```python\n# request {{request_index}}\n", source, "```\n");
}

std::string Script(const std::vector<Rule>& rules, const std::string& fallback, double fail_fraction = 0) {
  std::vector<std::string> parts;
  for (const Rule& r : rules) {
    parts.push_back(absl::StrCat("{\"match\": ", JsonString(r.match), ", \"times\": ", r.times,
                                 ", \"reply\": {\"content\": ", JsonString(r.content),
                                 ", \"usage\": {\"prompt_tokens\": 1000, \"completion_tokens\": 200}}}"));
  }
  return absl::StrCat("{\"rules\": [", absl::StrJoin(parts, ", "),
                      "], \"default\": {\"content\": ", JsonString(fallback), "}, \"fail_fraction\": ", fail_fraction,
                      ", \"fail_seed\": 7, \"failure\": {\"status\": 500}}");
}

// Planner answers FUSED, NARROW, POOL, WRONG once each, then FUSED; the executor implements each plan with
// the matching variant; the summarizer writes a canned experience.
std::string VariantsScript(double fail_fraction = 0) {
  return Script(
      {
          {kPlannerPrompt, 1, "**PLAN-FUSED**: use the fused silu activation"},
          {kPlannerPrompt, 1, "**PLAN-NARROW**: use narrower tiles"},
          {kPlannerPrompt, 1, "**PLAN-POOL**: move the multiply to GpSimd"},
          {kPlannerPrompt, 1, "**PLAN-WRONG**: skip the sigmoid"},
          {kPlannerPrompt, 0, "**PLAN-FUSED**: use the fused silu activation"},
          {"PLAN-FUSED", 0, CodeBlock(Example("variants/fused_act.py"))},
          {"PLAN-NARROW", 0, CodeBlock(NarrowKernel())},
          {"PLAN-POOL", 0, CodeBlock(PoolKernel())},
          {"PLAN-WRONG", 0, CodeBlock(WrongKernel())},
          {kSummarizerPrompt, 0, "**Fuse the activation**\nReplace sigmoid then multiply by one nl.silu call."},
      },
      "**PLAN-FUSED**", fail_fraction);
}

std::string SleepyScript(int seconds) {
  return Script({{kPlannerPrompt, 0, "**PLAN-SLEEPY**: take your time"},
                 {"PLAN-SLEEPY", 0, CodeBlock(SleepyKernel(seconds))},
                 {kSummarizerPrompt, 0, "**Nothing learned**\nThe kernels are the same."}},
                "**PLAN-SLEEPY**");
}

std::string ModelYaml(const E2eCluster& c) { return "{provider: openai, endpoint: double, model: double}"; }

// A job spec over the silu example at the small shape.
v1::JobSpec SiluSpec(int iterations, int beam, int plans) {
  v1::JobSpec spec = ExampleJobSpec("silu", "e2e-silu", 42, "openai");
  spec.mutable_search()->set_iterations(iterations);
  spec.mutable_search()->set_beam_width(beam);
  spec.mutable_search()->set_plans_per_candidate(plans);
  spec.mutable_profile()->set_timeout_seconds(60);
  return spec;
}

bool Finished(const v1::Job& job) {
  return job.state() == v1::JOB_STATE_SUCCEEDED || job.state() == v1::JOB_STATE_FAILED ||
         job.state() == v1::JOB_STATE_CANCELLED;
}

absl::StatusOr<v1::Job> GetJob(E2eCluster& c, const std::string& id) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 5s);
  v1::GetJobRequest request;
  request.set_job_id(id);
  v1::Job job;
  grpc::Status s = c.jobs().GetJob(&context, request, &job);
  if (!s.ok()) return absl::UnavailableError(s.error_message());
  return job;
}

// Polls until `condition(job)` holds; fails the test after `timeout`.
v1::Job WaitForJob(E2eCluster& c, const std::string& id, const std::function<bool(const v1::Job&)>& condition,
                   std::chrono::seconds timeout = 90s) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  v1::Job last;
  while (std::chrono::steady_clock::now() < deadline) {
    auto job = GetJob(c, id);
    if (job.ok()) {
      last = *job;
      if (condition(last)) return last;
    }
    std::this_thread::sleep_for(50ms);
  }
  ADD_FAILURE() << "job " << id << " did not reach the expected state in time: " << last.DebugString()
                << "\norchestrator log:\n"
                << c.LogTail("orchestrator");
  return last;
}

std::string Submit(E2eCluster& c, const v1::JobSpec& spec) {
  grpc::ClientContext context;
  v1::SubmitJobRequest request;
  *request.mutable_spec() = spec;
  v1::SubmitJobResponse response;
  grpc::Status s = c.jobs().SubmitJob(&context, request, &response);
  EXPECT_TRUE(s.ok()) << s.error_message();
  return response.job().job_id();
}

std::vector<v1::Candidate> Candidates(E2eCluster& c, const std::string& id) {
  grpc::ClientContext context;
  v1::ListCandidatesRequest request;
  request.set_job_id(id);
  v1::ListCandidatesResponse response;
  EXPECT_TRUE(c.jobs().ListCandidates(&context, request, &response).ok());
  return {response.candidates().begin(), response.candidates().end()};
}

bool Profiled(const v1::Candidate& c) {
  const v1::Verdict v = c.result().verdict();
  return v != v1::VERDICT_NO_KERNEL && v != v1::VERDICT_DUPLICATE && v != v1::VERDICT_CANCELLED;
}

// The job's counters agree with its candidates.
void ExpectConsistent(const v1::Job& job, const std::vector<v1::Candidate>& candidates) {
  int64_t counted = 0;
  for (const auto& [verdict, n] : job.candidates()) counted += n;
  EXPECT_EQ(counted, static_cast<int64_t>(candidates.size()));
  int64_t profiled = 0;
  double best = 1e300;
  for (const v1::Candidate& c : candidates) {
    EXPECT_EQ(c.state(), v1::CANDIDATE_STATE_DONE) << c.candidate_id();
    if (Profiled(c)) ++profiled;
    if (c.result().verdict() == v1::VERDICT_OK) best = std::min(best, c.result().latency().mean_ms());
  }
  EXPECT_EQ(job.stats().profiles_run(), profiled);
  EXPECT_DOUBLE_EQ(job.best_latency_ms(), best);
  EXPECT_NEAR(job.best_speedup(), job.baseline_latency_ms() / best, 1e-9);
}

int64_t WorkerProfiles(E2eCluster& c, int index) {
  auto status = c.WorkerStatus(index);
  if (!status.ok()) return 0;
  int64_t n = 0;
  for (const auto& [verdict, count] : status->profiles_by_verdict()) n += count;
  return n;
}

TEST(E2eTest, SearchFindsTheFastestVariantThroughTheCli) {
  ClusterOptions options;
  options.llm_script = VariantsScript();
  auto cluster = E2eCluster::Start("variants", options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  E2eCluster& c = **cluster;

  const std::string examples = kSourceDir + "/examples/silu/";
  const std::string spec_path = c.dir() + "/job.yaml";
  ASSERT_TRUE(core::WriteFileAtomic(
                  spec_path,
                  absl::StrCat("name: e2e-silu\npreset: small\n", "problem: {reference: ", examples,
                               "reference_small.py, kernel: ", examples, "kernel.py, metadata: ", examples,
                               "problem_small.yaml}\n", "device: sim-trn1\nseed: 42\n",
                               "search: {iterations: 2, beam_width: 2, plans_per_candidate: 4, samples_per_plan: 1,\n"
                               "         experiences_per_iteration: 4, memory_capacity: 8}\n",
                               "models:\n  planner: ", ModelYaml(c), "\n  executor: ", ModelYaml(c),
                               "\n  summarizer: ", ModelYaml(c), "\n",
                               "profile: {seeds: 1, timeout_seconds: 60}\nbudget: {max_wall_seconds: 600}\n"))
                  .ok());
  const std::string out_path = c.dir() + "/submit.out";
  auto cli = testing::ChildProcess::Start({kBinDir + "/accelopt", "submit", spec_path, "--wait", "--json",
                                           "--allow-path", examples, "--server", c.orchestrator_address()},
                                          out_path);
  ASSERT_TRUE(cli.ok()) << cli.status();
  auto exit = cli->WaitForExit(120s);
  ASSERT_TRUE(exit.has_value()) << "accelopt submit --wait did not finish: " << cli->Output();
  const std::string output = cli->Output();
  ASSERT_EQ(*exit, 0) << output;
  // The JSON object is the last line.
  std::string last = output.substr(0, output.find_last_not_of('\n') + 1);
  last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
  google::protobuf::Struct printed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(last, &printed).ok()) << output;
  const auto& f = printed.fields();
  EXPECT_EQ(f.at("state").string_value(), "SUCCEEDED");
  EXPECT_EQ(f.at("stop_reason").string_value(), "ITERATIONS_DONE");
  EXPECT_EQ(f.at("iterations_done").number_value(), 2);
  const std::string id = f.at("job_id").string_value();

  auto job = GetJob(c, id);
  ASSERT_TRUE(job.ok());
  auto candidates = Candidates(c, id);
  ASSERT_EQ(candidates.size(), 1u + 4u + 8u);
  ExpectConsistent(*job, candidates);
  EXPECT_EQ(f.at("stats").struct_value().fields().at("profiles_run").number_value(), job->stats().profiles_run());
  EXPECT_EQ(f.at("tokens").number_value(),
            static_cast<double>(job->usage().prompt_tokens() + job->usage().completion_tokens()));
  EXPECT_EQ(job->candidates().at("INCORRECT"), 1);
  // The best kernel is the fused-activation variant, the fastest one at this shape.
  const v1::Candidate* best = nullptr;
  for (const auto& cand : candidates) {
    if (cand.candidate_id() == job->best_candidate_id()) best = &cand;
  }
  ASSERT_NE(best, nullptr);
  EXPECT_NE(best->kernel().source().find("nl.silu(x_tile)"), std::string::npos) << best->kernel().source();
  EXPECT_GT(job->best_speedup(), 1.02);
  EXPECT_TRUE(job->has_best_peak_percent());
  // Experiences were stored in the job's private memory.
  grpc::ClientContext context;
  v1::ListExperiencesRequest list;
  list.set_namespace_(id);
  v1::ListExperiencesResponse experiences;
  ASSERT_TRUE(c.memory().ListExperiences(&context, list, &experiences).ok());
  EXPECT_GE(experiences.experiences_size(), 1);
  EXPECT_EQ(job->experiences_added(), experiences.experiences_size());
  // The job records which prompt text each agent answered with.
  for (const char* agent : {"planner", "executor", "summarizer"}) {
    ASSERT_EQ(job->prompts_by_agent().count(agent), 1u) << agent;
    EXPECT_EQ(job->prompts_by_agent().at(agent).name(), "default");
    EXPECT_EQ(job->prompts_by_agent().at(agent).sha256().size(), 64u);
  }
  EXPECT_NE(job->prompts_by_agent().at("planner").sha256(), job->prompts_by_agent().at("executor").sha256());
}

TEST(E2eTest, OrchestratorKilledMidJobResumesWithoutReprofiling) {
  ClusterOptions options;
  options.llm_script = VariantsScript();
  auto cluster = E2eCluster::Start("kill_orchestrator", options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  E2eCluster& c = **cluster;
  const std::string id = Submit(c, SiluSpec(3, 2, 4));
  WaitForJob(c, id, [](const v1::Job& j) { return j.stats().profiles_run() >= 4 || Finished(j); });
  ASSERT_TRUE(c.KillOrchestrator().ok());
  ASSERT_TRUE(c.RestartOrchestrator().ok()) << c.LogTail("orchestrator");
  v1::Job job = WaitForJob(c, id, Finished);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.message();
  EXPECT_EQ(job.iterations_done(), 3);
  auto candidates = Candidates(c, id);
  ExpectConsistent(job, candidates);
  const int64_t distinct = std::count_if(candidates.begin(), candidates.end(), Profiled);
  EXPECT_EQ(job.stats().profiles_run(), distinct);
  // The workers ran at most the profiles that were in flight at the kill (one per slot) more than that.
  const int64_t executed = WorkerProfiles(c, 0) + WorkerProfiles(c, 1);
  EXPECT_GE(executed, distinct);
  EXPECT_LE(executed, distinct + 2);
}

TEST(E2eTest, AWorkerKilledMidProfileHasItsCandidateCompletedOnTheOther) {
  ClusterOptions options;
  options.llm_script = SleepyScript(3);
  auto cluster = E2eCluster::Start("kill_worker", options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  E2eCluster& c = **cluster;
  const std::string id = Submit(c, SiluSpec(1, 1, 2));
  // Both sleepy children are on the workers (one slot each): kill worker 0 mid-profile.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  bool both_busy = false;
  while (!both_busy && std::chrono::steady_clock::now() < deadline) {
    auto s0 = c.WorkerStatus(0), s1 = c.WorkerStatus(1);
    both_busy = s0.ok() && s1.ok() && s0->busy_slots() == 1 && s1->busy_slots() == 1;
    if (!both_busy) std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(both_busy) << c.LogTail("orchestrator");
  c.KillProfiler(0);
  v1::Job job = WaitForJob(c, id, Finished);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.message();
  EXPECT_GE(job.stats().dispatch_retries(), 1);
  auto candidates = Candidates(c, id);
  ASSERT_EQ(candidates.size(), 3u);
  for (const auto& cand : candidates) {
    EXPECT_EQ(cand.result().verdict(), v1::VERDICT_OK) << cand.candidate_id() << ": " << cand.result().message();
    if (cand.iteration() == 1) {
      EXPECT_EQ(cand.result().worker(), c.profiler_address(1));
    }
  }
  ExpectConsistent(job, candidates);
}

TEST(E2eTest, JobCompletesWhenTheLlmFailsThirtyPercentOfCalls) {
  ClusterOptions options;
  options.llm_script = VariantsScript(/*fail_fraction=*/0.3);
  options.llm_max_attempts = 1;  // failures reach the search instead of being retried away
  auto cluster = E2eCluster::Start("flaky_llm", options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  E2eCluster& c = **cluster;
  const std::string id = Submit(c, SiluSpec(2, 2, 4));
  v1::Job job = WaitForJob(c, id, Finished);
  EXPECT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.message();
  EXPECT_EQ(job.iterations_done(), 2);
  auto candidates = Candidates(c, id);
  ExpectConsistent(job, candidates);
  EXPECT_GE(job.candidates().count("NO_KERNEL") ? job.candidates().at("NO_KERNEL") : 0, 1)
      << "with 30% of LLM calls failing some samples should have no kernel";
}

TEST(E2eTest, CancelStopsAllWorkWithinSeconds) {
  ClusterOptions options;
  options.llm_script = SleepyScript(20);
  auto cluster = E2eCluster::Start("cancel", options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  E2eCluster& c = **cluster;
  const std::string id = Submit(c, SiluSpec(3, 2, 4));
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  bool busy = false;
  while (!busy && std::chrono::steady_clock::now() < deadline) {
    auto s0 = c.WorkerStatus(0), s1 = c.WorkerStatus(1);
    busy = s0.ok() && s1.ok() && s0->busy_slots() + s1->busy_slots() == 2;
    if (!busy) std::this_thread::sleep_for(20ms);
  }
  ASSERT_TRUE(busy) << c.LogTail("orchestrator");
  // Two watchers writing to files (not a terminal): their lines arrive while the job runs, not at exit.
  auto watcher = [&](const std::string& out, bool json) {
    std::vector<std::string> argv = {kBinDir + "/accelopt", "watch", id, "--server", c.orchestrator_address()};
    if (json) argv.push_back("--json");
    return testing::ChildProcess::Start(argv, c.dir() + "/" + out);
  };
  auto plain = watcher("watch.out", false);
  auto json = watcher("watch.jsonl", true);
  ASSERT_TRUE(plain.ok() && json.ok());
  ASSERT_TRUE(testing::WaitUntil([&] { return absl::StrContains(plain->Output(), "iteration 1 started"); }, 30s).ok())
      << plain->Output();
  ASSERT_TRUE(testing::WaitUntil([&] { return absl::StrContains(json->Output(), "\"iteration_started\""); }, 30s).ok())
      << json->Output();
  EXPECT_FALSE(plain->WaitForExit(0ms).has_value());  // still following the running job
  const auto cancelled_at = std::chrono::steady_clock::now();
  grpc::ClientContext context;
  v1::CancelJobRequest request;
  request.set_job_id(id);
  v1::Job job;
  ASSERT_TRUE(c.jobs().CancelJob(&context, request, &job).ok());
  EXPECT_EQ(job.state(), v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(job.stop_reason(), v1::STOP_REASON_CANCELLED);
  // The sandboxes of the cancelled profiles are killed: both workers are idle within seconds.
  bool idle = false;
  while (!idle && std::chrono::steady_clock::now() < cancelled_at + 5s) {
    auto s0 = c.WorkerStatus(0), s1 = c.WorkerStatus(1);
    idle = s0.ok() && s1.ok() && s0->busy_slots() + s1->busy_slots() == 0;
    if (!idle) std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(idle) << "profiles still running 5 s after the cancel";
  // Both watchers end with the cancelled job's exit code; --json printed one object per line, each event
  // with its sequence and time, then the job.
  for (testing::ChildProcess* watch : {&*plain, &*json}) {
    std::optional<int> status = watch->WaitForExit(30s);
    ASSERT_TRUE(status.has_value() && WIFEXITED(*status)) << watch->Output();
    EXPECT_EQ(WEXITSTATUS(*status), 3) << watch->Output();
  }
  std::vector<std::string> lines = absl::StrSplit(json->Output(), '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 3u);
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    google::protobuf::Struct event;
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(lines[i], &event).ok()) << lines[i];
    EXPECT_EQ(event.fields().at("sequence").number_value(), static_cast<double>(i + 1));
    EXPECT_FALSE(event.fields().at("time").string_value().empty()) << lines[i];
  }
  google::protobuf::Struct final_job;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(lines.back(), &final_job).ok()) << lines.back();
  EXPECT_EQ(final_job.fields().at("state").string_value(), "CANCELLED");
  auto candidates = Candidates(c, id);
  ExpectConsistent(job, candidates);
  EXPECT_GE(job.candidates().at("CANCELLED"), 2);
}

// The offline optimizer (builtin planner, executor and summarizer; no LLM): finds a verified speedup, learns
// experiences, and gives the same best kernel and numbers when the same job runs twice.
TEST(E2eTest, AgentServicesCheckTheModelsAtSubmit) {
  ClusterOptions options;
  options.llm_script = "{\"rules\": []}";  // nothing is planned: every submit is rejected
  auto cluster = E2eCluster::Start("model_check", options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  E2eCluster& c = **cluster;
  auto submit = [&c](const v1::JobSpec& spec) {
    grpc::ClientContext context;
    v1::SubmitJobRequest request;
    *request.mutable_spec() = spec;
    v1::SubmitJobResponse response;
    return c.jobs().SubmitJob(&context, request, &response);
  };
  v1::JobSpec spec = SiluSpec(1, 1, 1);
  spec.mutable_models()->mutable_executor()->set_provider("mystery");
  grpc::Status s = submit(spec);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "spec.models.executor.provider: unknown provider 'mystery' (known: builtin, openai)");

  spec = SiluSpec(1, 1, 1);
  spec.mutable_models()->mutable_planner()->set_endpoint("elsewhere");
  s = submit(spec);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(
      s.error_message().rfind("spec.models.planner.endpoint: unknown endpoint 'elsewhere' (configured: double", 0), 0u)
      << s.error_message();

  // A job naming its own endpoint and key variable: refused, and the URL hears nothing (a capture server).
  auto capture = testing::LlmDouble::Start({}, {});
  ASSERT_TRUE(capture.ok()) << capture.status();
  spec = SiluSpec(1, 1, 1);
  v1::ModelSpec* summarizer = spec.mutable_models()->mutable_summarizer();
  summarizer->clear_endpoint();
  summarizer->set_base_url((*capture)->base_url());
  summarizer->set_api_key_env("HOME");
  s = submit(spec);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message().rfind("spec.models.summarizer.base_url: jobs may not name their own endpoint", 0), 0u)
      << s.error_message();
  EXPECT_EQ((*capture)->request_count(), 0);

  // Preset paper names the paper's model; this cluster's endpoint has no profile with the alias "paper".
  spec = SiluSpec(1, 1, 1);
  spec.set_preset("paper");
  spec.clear_models();
  s = submit(spec);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message().rfind("spec.models.planner.model: preset paper runs the paper's model", 0), 0u)
      << s.error_message();
}

TEST(E2eTest, BuiltinOptimizerIsDeterministicAndLearns) {
  ClusterOptions options;
  options.llm_script = "{\"rules\": []}";  // the double stays idle: no agent calls it
  auto cluster = E2eCluster::Start("builtin", options);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  E2eCluster& c = **cluster;
  v1::JobSpec spec = ExampleJobSpec("rope", "e2e-builtin-rope", 7, "builtin");
  spec.mutable_search()->set_iterations(2);

  std::vector<v1::Job> runs;
  std::vector<std::string> best_sources;
  for (int run = 0; run < 2; ++run) {
    const std::string id = Submit(c, spec);
    v1::Job job = WaitForJob(c, id, Finished, 180s);
    ASSERT_EQ(job.state(), v1::JOB_STATE_SUCCEEDED) << job.message();
    auto candidates = Candidates(c, id);
    ExpectConsistent(job, candidates);
    for (const auto& cand : candidates) {
      if (cand.candidate_id() == job.best_candidate_id()) best_sources.push_back(cand.kernel().source());
    }
    runs.push_back(job);
  }
  ASSERT_EQ(best_sources.size(), 2u);
  EXPECT_GT(runs[0].best_speedup(), 1.0);
  EXPECT_GT(runs[0].experiences_added(), 0);
  EXPECT_EQ(runs[0].usage().prompt_tokens() + runs[0].usage().completion_tokens(), 0);
  // Same seed, same spec: same best kernel and the same numbers.
  EXPECT_EQ(best_sources[0], best_sources[1]);
  EXPECT_DOUBLE_EQ(runs[0].best_latency_ms(), runs[1].best_latency_ms());
  EXPECT_DOUBLE_EQ(runs[0].baseline_latency_ms(), runs[1].baseline_latency_ms());
  EXPECT_EQ((std::map<std::string, int64_t>(runs[0].candidates().begin(), runs[0].candidates().end())),
            (std::map<std::string, int64_t>(runs[1].candidates().begin(), runs[1].candidates().end())));
  EXPECT_EQ(runs[0].experiences_added(), runs[1].experiences_added());
}

}  // namespace
}  // namespace accelopt::e2e
