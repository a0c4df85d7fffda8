# The specsim executable linked as a static PIE (SPECSIM_STATIC_SPECSIM).
#
# Why: a short command spends much of its life in the dynamic loader and in calls through the PLT
# (libprotobuf, libstdc++, libfmt: ~4,400 symbol relocations). Linked statically, `specsim collective
# --algo all` on the default box took 16.8 ms against 22.8 ms, `specsim simulate` 9.3 against 13.2
# (hyperfine, 2-core development machine; bench/RESULTS.md). A static PIE, not a plain static
# executable: crtbeginT.o of a plain static link registers every unwind table, and the first
# exception (CLI11's --help) then sorts them all (+4 ms); a static PIE finds them through
# PT_GNU_EH_FRAME like a dynamic one.
#
# How: a target with the property SPECSIM_STATIC_LINK links the static archives through the
# specsim_protobuf, specsim_fmt and specsim_zlib interface targets (generator expressions evaluated on the
# target being linked): specsim and the scale report (bench/), linked as specsim is. Every other
# target (tests, specsim_bench, specsim-validate) links the shared libraries as before. Debian ships no libfmt.a, so fmt's compiled part is built from its headers
# (sim/core/fmt_library.cc, fmt 9 only).
set(SPECSIM_STATIC_LINK_AVAILABLE OFF)
if(SPECSIM_STATIC_SPECSIM AND SPECSIM_BUILD_SIM)
  find_library(SPECSIM_PROTOBUF_ARCHIVE NAMES libprotobuf.a)
  find_library(SPECSIM_ZLIB_ARCHIVE NAMES libz.a)
  set(why "")
  if(SPECSIM_SANITIZE OR SPECSIM_BUILD_FUZZ)
    set(why "sanitizers or fuzzing are on")
  elseif(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    set(why "the compiler is not GCC (whose Debian build makes PIE objects by default)")
  elseif(NOT fmt_VERSION VERSION_GREATER_EQUAL 9 OR NOT fmt_VERSION VERSION_LESS 10)
    set(why "fmt ${fmt_VERSION} is not 9.x (sim/core/fmt_library.cc is fmt 9's src/format.cc)")
  elseif(NOT SPECSIM_PROTOBUF_ARCHIVE OR NOT SPECSIM_ZLIB_ARCHIVE)
    set(why "libprotobuf.a or libz.a is missing")
  endif()
  if(why)
    message(STATUS "specsim: the specsim executable is linked dynamically: ${why}")
  else()
    set(SPECSIM_STATIC_LINK_AVAILABLE ON)
    message(STATUS "specsim: the specsim executable is linked as a static PIE")
  endif()
endif()

set(static_link "$<BOOL:$<TARGET_PROPERTY:SPECSIM_STATIC_LINK>>")
add_library(specsim_protobuf INTERFACE)
add_library(specsim_fmt INTERFACE)
add_library(specsim_zlib INTERFACE)
if(SPECSIM_BUILD_SIM)
  find_package(ZLIB REQUIRED)
endif()
if(SPECSIM_STATIC_LINK_AVAILABLE)
  add_library(specsim_fmt_static STATIC ${PROJECT_SOURCE_DIR}/sim/core/fmt_library.cc)
  target_include_directories(specsim_fmt_static PRIVATE $<TARGET_PROPERTY:fmt::fmt,INTERFACE_INCLUDE_DIRECTORIES>)
  target_link_libraries(specsim_fmt INTERFACE "$<${static_link}:specsim_fmt_static>"
                                              "$<$<NOT:${static_link}>:fmt::fmt>")
  target_include_directories(specsim_fmt INTERFACE $<TARGET_PROPERTY:fmt::fmt,INTERFACE_INCLUDE_DIRECTORIES>)
  # The static protobuf needs zlib: specsim_zlib, static for the same targets.
  target_link_libraries(specsim_protobuf INTERFACE "$<${static_link}:${SPECSIM_PROTOBUF_ARCHIVE}>"
                                                   "$<${static_link}:specsim_zlib>"
                                                   "$<$<NOT:${static_link}>:protobuf::libprotobuf>")
  target_link_libraries(specsim_zlib INTERFACE "$<${static_link}:${SPECSIM_ZLIB_ARCHIVE}>"
                                               "$<$<NOT:${static_link}>:ZLIB::ZLIB>")
  target_include_directories(specsim_protobuf INTERFACE ${Protobuf_INCLUDE_DIRS})
else()
  target_link_libraries(specsim_protobuf INTERFACE protobuf::libprotobuf)
  if(SPECSIM_BUILD_SIM)
    target_link_libraries(specsim_fmt INTERFACE fmt::fmt)
    target_link_libraries(specsim_zlib INTERFACE ZLIB::ZLIB)
  endif()
endif()

# Links `target` statically when possible.
function(specsim_link_statically target)
  if(SPECSIM_STATIC_LINK_AVAILABLE)
    set_target_properties(${target} PROPERTIES SPECSIM_STATIC_LINK ON)
    target_link_options(${target} PRIVATE -static-pie -Wl,--eh-frame-hdr)
  endif()
endfunction()
