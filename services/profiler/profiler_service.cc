#include "services/profiler/profiler_service.h"
