#ifndef SUBRECON_BUILD_INFO_H
#define SUBRECON_BUILD_INFO_H

/// The version this binary was built from: the git tag at HEAD, else the commit (with "-dirty" when the tree had
/// uncommitted changes), else "unknown" (a build outside a git checkout). Package.swift defines it at build time.
const char *subrecon_build_version(void);

#endif
