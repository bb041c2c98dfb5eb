// `accelopt report JOB --out DIR`: the job's HTML report (from GetJobReport) written to DIR/report.html.
#pragma once

#include "cli/command.h"

namespace accelopt::cli {

Command ReportCommand();

}  // namespace accelopt::cli
