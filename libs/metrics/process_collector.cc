#include "libs/metrics/process_collector.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "absl/strings/str_split.h"

namespace accelopt::metrics {
namespace {

prometheus::MetricFamily Gauge(std::string name, std::string help, double value,
                               prometheus::MetricType type = prometheus::MetricType::Gauge) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  prometheus::ClientMetric metric;
  if (type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
  return family;
}

// Fields of /proc/self/stat after the command name; index 0 is the state (field 3 of proc(5)).
std::vector<std::string> StatFields() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = text.rfind(')');
  if (close == std::string::npos) return {};
  return absl::StrSplit(text.substr(close + 2), ' ', absl::SkipEmpty());
}

double BootTimeSeconds() {
  std::ifstream in("/proc/stat");
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime") {
      in >> value;
      return value;
    }
    in.ignore(1 << 16, '\n');
  }
  return 0;
}

int OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int count = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;  // the directory stream's own descriptor
}

}  // namespace

ProcessCollector::ProcessCollector(std::string component, std::string version)
    : component_(std::move(component)), version_(std::move(version)) {}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  std::vector<prometheus::MetricFamily> families;
  prometheus::MetricFamily info = Gauge("accelopt_build_info", "Build of this binary; always 1", 1);
  info.metric.front().label = {{"component", component_}, {"version", version_}};
  families.push_back(std::move(info));

  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  std::vector<std::string> stat = StatFields();
  // proc(5): utime=14, stime=15, starttime=22, vsize=23, rss=24 (1-based); our index = field - 3.
  if (stat.size() > 21 && ticks > 0) {
    double cpu = (std::stod(stat[11]) + std::stod(stat[12])) / ticks;
    families.push_back(Gauge("process_cpu_seconds_total", "User and system CPU time spent in seconds", cpu,
                             prometheus::MetricType::Counter));
    double boot = BootTimeSeconds();
    if (boot > 0) {
      families.push_back(Gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds",
                               boot + std::stod(stat[19]) / ticks));
    }
    families.push_back(Gauge("process_virtual_memory_bytes", "Virtual memory size in bytes", std::stod(stat[20])));
    families.push_back(
        Gauge("process_resident_memory_bytes", "Resident memory size in bytes", std::stod(stat[21]) * page));
  }
  if (int fds = OpenFds(); fds >= 0) {
    families.push_back(Gauge("process_open_fds", "Number of open file descriptors", fds));
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    families.push_back(
        Gauge("process_max_fds", "Maximum number of open file descriptors", static_cast<double>(limit.rlim_cur)));
  }
  return families;
}

}  // namespace accelopt::metrics
