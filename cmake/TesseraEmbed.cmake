# TesseraEmbed.cmake — cmake -DIN=file -DOUT=file.c -DSYMBOL=name -P: write
# file.c defining `const unsigned char name[]` (and name_size) with IN's bytes.
file(READ "${IN}" _hex HEX)
string(LENGTH "${_hex}" _len)
math(EXPR _bytes "${_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _body "${_hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" _body "${_body}")
file(WRITE "${OUT}" "/* generated from ${IN}: do not edit */\n#include <stddef.h>\n"
     "/* 8-byte aligned: cuModuleLoadData reads the fat binary header in place */\n"
     "_Alignas(8) const unsigned char ${SYMBOL}[] = {\n${_body}0};\n"
     "const size_t ${SYMBOL}_size = ${_bytes};\n")
