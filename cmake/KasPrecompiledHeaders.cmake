# Precompiled headers for some test executables: compile time, not behaviour.
#
# CI builds the tests twice (Release, ASan+UBSan), and some a third time (TSan), on 2 cores with no
# ccache. A test TU spends much of its compile parsing the same headers (gtest, protoc's output,
# yaml-cpp, the framework). GCC 12's PCH files are large (150-350 MB), though, and every TU pays to
# load one (mostly system time). A header a TU does not include also costs it the templates that
# header instantiates. So a PCH pays only where many TUs share heavy headers. Measured (CPU s,
# Release, -j2): plugins_test+framework_test 334 -> 284, observability_test 42 -> 29, client_test
# 61 -> 53. It was slower for apiserver_test, config_test, cache_test, the messages tests, and a
# CAF PCH shared by the actor tests, so those have none.
#
#   kas_test_pch(<target> <header>...)    the target gets its own PCH
#   kas_test_pch_reuse(<target> <donor>)  the target reuses another target's PCH (same compile options;
#                                         definitions no header uses may differ)
#
# Headers are listed as <...> so they resolve through the include path like the TUs' own includes.
# GCC falls back to parsing the headers, with a -Winvalid-pch warning, if a PCH does not fit.
# -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON builds without them (e.g. to check that every file includes
# what it uses). With ccache, PCH builds need CCACHE_SLOPPINESS=pch_defines,time_macros (README).

# What nearly every test TU includes.
set(KAS_TEST_PCH_COMMON
  <gtest/gtest.h>
  <algorithm> <chrono> <functional> <map> <memory> <optional> <set> <string> <string_view> <vector>
  <messages/k8s/meta.pb.h> <messages/k8s/core.pb.h> <messages/codec.hpp>)

function(kas_test_pch target)
  if(CMAKE_DISABLE_PRECOMPILE_HEADERS)
    return()
  endif()
  target_precompile_headers(${target} PRIVATE ${ARGN})
endfunction()

function(kas_test_pch_reuse target donor)
  if(CMAKE_DISABLE_PRECOMPILE_HEADERS)
    return()
  endif()
  target_precompile_headers(${target} REUSE_FROM ${donor})
endfunction()
