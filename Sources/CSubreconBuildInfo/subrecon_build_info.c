#include "subrecon_build_info.h"

#ifndef SUBRECON_BUILD_VERSION
#define SUBRECON_BUILD_VERSION "unknown"
#endif

const char *subrecon_build_version(void) { return SUBRECON_BUILD_VERSION; }
