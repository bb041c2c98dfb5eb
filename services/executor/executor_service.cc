#include "services/executor/executor_service.h"
