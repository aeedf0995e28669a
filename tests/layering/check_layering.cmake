# The layering rules of src/, checked on the sources themselves:
#  - no backend includes another backend (src/backends/<X>/ -> backends/<Y>/);
#  - the backend contract (src/backends/*.h|cpp) includes no backend;
#  - the kernel library (src/kernels), the GPU layer (src/gpu) and the
#    standalone VGF layer (src/standalone_vgf) include no backend, and the GPU
#    layer does not include the kernel library above it;
#  - the runtime (src/runtime) and the C API (src/capi) include no file of a
#    backend (src/backends/<X>/) but its door, backends/<X>/<X>_backend.h, and
#    that only from src/runtime/builtin_backends.cpp: everything else goes
#    through the contract (src/backends/*.h);
#  - no backend's CMake target links another backend's target, and neither
#    gpuu_kernels nor gpuu_gpu links a backend.
# Every offence is printed as file:line before the check fails.
# Run as: cmake -DROOT=<source tree> -P check_layering.cmake
if(NOT ROOT)
  message(FATAL_ERROR "check_layering.cmake: pass -DROOT=<source tree>")
endif()
set(violations 0)

# "<file>:<line>: <why>" for one offence.
macro(report file line why)
  file(RELATIVE_PATH rel "${ROOT}" "${file}")
  message("${rel}:${line}: ${why}")
  math(EXPR violations "${violations} + 1")
endmacro()

# The lines of `file` as a list, one entry per line (empty lines kept), with
# the characters that CMake lists treat specially replaced.
function(read_lines file out)
  file(READ "${file}" text)
  string(REPLACE "\\" "/" text "${text}")
  string(REPLACE ";" "," text "${text}")
  string(REPLACE "[" "(" text "${text}")
  string(REPLACE "]" ")" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

# Which layer a source file is in: "backend:<name>", "contract", "kernels",
# "gpu", "standalone_vgf", "runtime", "capi", or "".
function(layer_of file out)
  file(RELATIVE_PATH rel "${ROOT}/src" "${file}")
  set(layer "")
  if(rel MATCHES "^backends/([^/]+)/")
    set(layer "backend:${CMAKE_MATCH_1}")
  elseif(rel MATCHES "^backends/[^/]+$")
    set(layer "contract")
  elseif(rel MATCHES "^(kernels|gpu|standalone_vgf|runtime|capi)/")
    set(layer "${CMAKE_MATCH_1}")
  endif()
  set(${out} "${layer}" PARENT_SCOPE)
endfunction()

# The one file that opens backends' doors.
set(door_opener "${ROOT}/src/runtime/builtin_backends.cpp")

# Includes.
file(GLOB_RECURSE sources "${ROOT}/src/backends/*.h" "${ROOT}/src/backends/*.cpp" "${ROOT}/src/kernels/*.h"
     "${ROOT}/src/kernels/*.cpp" "${ROOT}/src/gpu/*.h" "${ROOT}/src/gpu/*.cpp" "${ROOT}/src/standalone_vgf/*.h"
     "${ROOT}/src/standalone_vgf/*.cpp" "${ROOT}/src/runtime/*.h" "${ROOT}/src/runtime/*.cpp" "${ROOT}/src/capi/*.h"
     "${ROOT}/src/capi/*.cpp")
list(SORT sources)
foreach(file ${sources})
  file(READ "${file}" text)
  # Only files that include a backend or the kernel library need reading line by line.
  if(NOT text MATCHES "#[ \t]*include[ \t]*[\"<](backends|kernels)/")
    continue()
  endif()
  layer_of("${file}" layer)
  read_lines("${file}" lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]+)[\">]")
      continue()
    endif()
    set(path "${CMAKE_MATCH_1}")
    set(target_backend "")
    if(path MATCHES "^backends/([^/]+)/")
      set(target_backend "${CMAKE_MATCH_1}")
    endif()
    if(layer MATCHES "^backend:(.+)$")
      set(own "${CMAKE_MATCH_1}")
      if(target_backend AND NOT target_backend STREQUAL own)
        report("${file}" ${n} "backend '${own}' includes ${path}, a file of backend '${target_backend}'")
      endif()
    elseif(layer STREQUAL "contract")
      if(target_backend)
        report("${file}" ${n} "the backend contract includes ${path}, a file of backend '${target_backend}'")
      endif()
    elseif(layer STREQUAL "kernels" OR layer STREQUAL "gpu" OR layer STREQUAL "standalone_vgf")
      if(path MATCHES "^backends/")
        report("${file}" ${n} "src/${layer} is below the backends but includes ${path}")
      elseif(layer STREQUAL "gpu" AND path MATCHES "^kernels/")
        report("${file}" ${n} "src/gpu is below the kernel library but includes ${path}")
      endif()
    elseif(target_backend AND (layer STREQUAL "runtime" OR layer STREQUAL "capi"))
      if(NOT file STREQUAL door_opener)
        report("${file}" ${n} "src/${layer} includes ${path}, a file of backend '${target_backend}' (only runtime/builtin_backends.cpp opens a backend, by its door)")
      elseif(NOT path STREQUAL "backends/${target_backend}/${target_backend}_backend.h")
        report("${file}" ${n} "builtin_backends.cpp includes ${path}, not the door of backend '${target_backend}' (backends/${target_backend}/${target_backend}_backend.h)")
      endif()
    endif()
  endforeach()
endforeach()

# Link dependencies of the targets.
file(GLOB_RECURSE lists "${ROOT}/src/backends/*/CMakeLists.txt" "${ROOT}/src/kernels/CMakeLists.txt"
     "${ROOT}/src/gpu/CMakeLists.txt")
list(SORT lists)
foreach(file ${lists})
  layer_of("${file}" layer)
  read_lines("${file}" lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    string(REGEX REPLACE "#.*$" "" code "${line}")  # comments may name targets freely
    string(REGEX MATCHALL "gpuu_backends_[A-Za-z0-9_]+|gpuu_kernels" names "${code}")
    foreach(name IN LISTS names)
      if(name STREQUAL "gpuu_kernels")
        if(layer STREQUAL "gpu")
          report("${file}" ${n} "gpuu_gpu is below the kernel library but names gpuu_kernels")
        endif()
        continue()
      endif()
      string(REGEX REPLACE "^gpuu_backends_" "" named "${name}")
      if(named MATCHES "^contract")  # the contract's targets (gpuu_backends_contract, _contract_host)
        continue()
      endif()
      if(layer MATCHES "^backend:(.+)$")
        if(NOT named STREQUAL CMAKE_MATCH_1)
          report("${file}" ${n} "backend '${CMAKE_MATCH_1}' names ${name}, the target of backend '${named}'")
        endif()
      else()
        report("${file}" ${n} "src/${layer} is below the backends but names ${name}")
      endif()
    endforeach()
  endforeach()
endforeach()

if(violations GREATER 0)
  message(FATAL_ERROR "${violations} layering violation(s): the rules are in README.md, section Layout")
endif()
message("layering: backends, kernel library and GPU layer depend one way; runtime and C API open backends only by their doors")
