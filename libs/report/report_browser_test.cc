// Loads the job report in Debian's headless Chromium: no console errors, the charts and the tree are in the DOM
// after load, and a screenshot is written. Skipped (with the reason) when chromium is not installed; install it
// with scripts/install-deps.sh --browser.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "libs/report/job_report_html.h"
#include "libs/report/report_fixture.h"
#include "libs/testing/scratch_dir.h"

namespace accelopt::report {
namespace {

namespace fs = std::filesystem;

std::string Chromium() {
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return "";
}

// Records uncaught errors and console.error calls, and after load writes what it saw into <body> attributes
// so that --dump-dom shows them.
constexpr char kProbe[] = R"(<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
const originalError = console.error;
console.error = (...args) => { window.__errors.push(args.join(' ')); originalError(...args); };
window.addEventListener('load', () => {
  const b = document.body;
  b.setAttribute('data-errors', String(window.__errors.length) + ':' + window.__errors.join('|'));
  b.setAttribute('data-charts', String(document.querySelectorAll('svg.chart').length));
  b.setAttribute('data-nodes', String(document.querySelectorAll('svg.tree-svg circle.node').length));
  b.setAttribute('data-paths', String(document.querySelectorAll('svg.chart path').length));
});
</script>
)";

struct ProcessRun {
  int exit_code;
  std::string out, err;
};

ProcessRun Execute(const std::string& command, const std::string& dir) {
  const std::string err_path = dir + "/stderr.txt";
  FILE* pipe = popen((command + " 2>" + err_path).c_str(), "r");
  std::string out;
  char buffer[4096];
  for (size_t n; pipe != nullptr && (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  const int status = pipe == nullptr ? -1 : pclose(pipe);
  std::stringstream err;
  err << std::ifstream(err_path).rdbuf();
  return {status, out, err.str()};
}

std::string Flags(const std::string& dir) {
  return "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
         "--disable-component-update --disable-sync --enable-logging=stderr --v=0 --user-data-dir=" +
         dir + "/profile";
}

TEST(ReportInBrowser, LoadsWithoutErrorsShowsThePlotsAndTakesAScreenshot) {
  const std::string chromium = Chromium();
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh --browser installs it)";
  accelopt::testing::ScratchDir scratch;
  const std::string& dir = scratch.path();
  const auto f = testing::SmallJob();
  std::string html = RenderJobReportHtml(f.job, f.candidates, f.events);
  std::ofstream(dir + "/report.html") << html;
  html.insert(html.find("</head>"), kProbe);
  std::ofstream(dir + "/probed.html") << html;

  const ProcessRun dom = Execute("timeout 120 " + chromium + " " + Flags(dir) +
                                     " --virtual-time-budget=3000 --dump-dom file://" + dir + "/probed.html",
                                 dir);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_NE(dom.out.find("data-errors=\"0:\""), std::string::npos) << dom.out.substr(0, 2000);
  // latency, speedup, peak, verdicts, usage by agent (2) and over iterations (2)
  EXPECT_NE(dom.out.find("data-charts=\"8\""), std::string::npos);
  EXPECT_NE(dom.out.find("data-nodes=\"" + std::to_string(f.candidates.size()) + "\""), std::string::npos);
  EXPECT_EQ(dom.out.find("data-paths=\"0\""), std::string::npos);  // the lines are drawn
  EXPECT_EQ(dom.err.find(":CONSOLE("), std::string::npos) << dom.err;

  const std::string png = dir + "/report.png";
  const ProcessRun shot =
      Execute("timeout 120 " + chromium + " " + Flags(dir) + " --hide-scrollbars --screenshot=" + png +
                  " --window-size=1400,2600 file://" + dir + "/report.html",
              dir);
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  ASSERT_TRUE(fs::exists(png)) << shot.err;
  EXPECT_GT(fs::file_size(png), 20000u);  // a blank page compresses to a few kB
  std::ifstream in(png, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG");
  std::cout << "screenshot: " << png << "\n";
}

}  // namespace
}  // namespace accelopt::report
