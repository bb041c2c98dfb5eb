#include "services/memory/memory_service.h"
