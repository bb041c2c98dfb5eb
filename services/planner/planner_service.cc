#include "services/planner/planner_service.h"
