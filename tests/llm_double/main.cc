// accelopt-llm-double: a scripted OpenAI-compatible Chat Completions server for end-to-end tests.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <string>

#include "absl/strings/numbers.h"
#include "libs/core/file.h"
#include "tests/llm_double/llm_double.h"

namespace {

constexpr char kUsage[] =
    "accelopt-llm-double: a scripted OpenAI-compatible Chat Completions server for tests\n\n"
    "Usage: accelopt-llm-double --port N [--script FILE] [--host 127.0.0.1] [--tls_cert PEM --tls_key PEM]\n"
    "  --port 0 picks a free port. Prints 'listening on HOST:PORT' once serving; stops on SIGTERM/SIGINT.\n"
    "  Script format and control endpoints (/_double/requests, /_double/stats, PUT /_double/script):\n"
    "  docs/agents.md.";

int Fail(const std::string& message) {
  std::fprintf(stderr, "accelopt-llm-double: error: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  accelopt::testing::LlmDouble::Options options;
  std::string script_path, cert_path, key_path;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::puts(kUsage);
      return 0;
    }
    if (i + 1 >= argc) return Fail("flag " + flag + " needs a value");
    std::string value = argv[++i];
    if (flag == "--port") {
      if (!absl::SimpleAtoi(value, &options.port)) return Fail("--port: not a number: " + value);
    } else if (flag == "--script") {
      script_path = value;
    } else if (flag == "--host") {
      options.host = value;
    } else if (flag == "--tls_cert") {
      cert_path = value;
    } else if (flag == "--tls_key") {
      key_path = value;
    } else {
      return Fail("unknown flag " + flag + "\n" + kUsage);
    }
  }
  accelopt::testing::DoubleScript script;
  if (!script_path.empty()) {
    auto text = accelopt::core::ReadFile(script_path);
    if (!text.ok()) return Fail(std::string(text.status().message()));
    auto parsed = accelopt::testing::ParseDoubleScript(*text);
    if (!parsed.ok()) return Fail(script_path + ": " + std::string(parsed.status().message()));
    script = *std::move(parsed);
  }
  if (cert_path.empty() != key_path.empty()) return Fail("--tls_cert and --tls_key go together");
  if (!cert_path.empty()) {
    auto cert = accelopt::core::ReadFile(cert_path);
    auto key = accelopt::core::ReadFile(key_path);
    if (!cert.ok()) return Fail(std::string(cert.status().message()));
    if (!key.ok()) return Fail(std::string(key.status().message()));
    options.tls = accelopt::testing::TlsIdentity{*cert, *key};
  }
  auto server = accelopt::testing::LlmDouble::Start(std::move(script), options);
  if (!server.ok()) return Fail(std::string(server.status().message()));
  std::printf("listening on %s:%d\n", options.host.c_str(), (*server)->port());
  std::fflush(stdout);
  int received = 0;
  sigwait(&signals, &received);
  return 0;
}
