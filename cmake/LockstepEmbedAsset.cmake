# Text files embedded in a library at build time (the HTML report's scripts
# and style sheets, src/report/assets/README.md), in two roles:
#
# include(LockstepEmbedAsset) defines
#   lockstep_embed_assets(target header namespace FILE SYMBOL [FILE SYMBOL...])
# which adds to `target` one generated source per FILE,
# <build>/generated/<target>/<file name>.cc, defining
#   const std::string_view <namespace>::SYMBOL = <the bytes of FILE>;
# after including `header` (which declares SYMBOL extern). It is made again
# when FILE or this script changes.
#
# cmake -DINPUT=FILE -DOUTPUT=X.cc -DSYMBOL=S -DHEADER=H -DNAMESPACE=N -P
# LockstepEmbedAsset.cmake writes that source: FILE's bytes, unchanged, in
# a raw string literal, whose delimiter FILE must not hold.

if(CMAKE_SCRIPT_MODE_FILE)
  foreach(v INPUT OUTPUT SYMBOL HEADER NAMESPACE)
    if(NOT DEFINED ${v})
      message(FATAL_ERROR "LockstepEmbedAsset.cmake: -D${v}=... missing")
    endif()
  endforeach()
  set(delim "lockstep_asset")  # at most 16 characters (a raw string's limit)
  file(READ "${INPUT}" content)
  string(FIND "${content}" ")${delim}\"" at)
  if(NOT at EQUAL -1)
    message(FATAL_ERROR "${INPUT} holds )${delim}\" (the end of the raw string "
                        "that would embed it): change the delimiter in ${CMAKE_CURRENT_LIST_FILE}")
  endif()
  get_filename_component(name "${INPUT}" NAME)
  # ${content} is expanded once: `${...}` and `;` in the file stay as they are.
  file(WRITE "${OUTPUT}"
       "// Generated from ${name} by cmake/LockstepEmbedAsset.cmake: edit that file.\n"
       "#include \"${HEADER}\"\n\nnamespace ${NAMESPACE} {\n\n"
       "const std::string_view ${SYMBOL} = R\"${delim}(${content})${delim}\";\n\n"
       "}  // namespace ${NAMESPACE}\n")
  return()
endif()

set(LOCKSTEP_EMBED_ASSET_SCRIPT ${CMAKE_CURRENT_LIST_FILE})

function(lockstep_embed_assets target header namespace)
  set(args ${ARGN})
  list(LENGTH args n)
  math(EXPR odd "${n} % 2")
  if(n EQUAL 0 OR odd)
    message(FATAL_ERROR "lockstep_embed_assets(${target}): give FILE SYMBOL pairs")
  endif()
  set(dir ${CMAKE_BINARY_DIR}/generated/${target})
  while(args)
    list(POP_FRONT args file symbol)
    get_filename_component(name ${file} NAME)
    set(out ${dir}/${name}.cc)
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${CMAKE_COMMAND} -DINPUT=${file} -DOUTPUT=${out} -DSYMBOL=${symbol}
              -DHEADER=${header} -DNAMESPACE=${namespace} -P ${LOCKSTEP_EMBED_ASSET_SCRIPT}
      DEPENDS ${file} ${LOCKSTEP_EMBED_ASSET_SCRIPT}
      COMMENT "Embedding ${name} as ${namespace}::${symbol}"
      VERBATIM)
    target_sources(${target} PRIVATE ${out})
  endwhile()
endfunction()
