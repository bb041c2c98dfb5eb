#include "services/orchestrator/orchestrator_service.h"
