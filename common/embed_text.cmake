# Turn the file IN into a C source OUT defining NAME[] (NUL-terminated) and NAME_len.
file(READ ${IN} HEX HEX)
string(LENGTH "${HEX}" HEXLEN)
math(EXPR LEN "${HEXLEN} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," BYTES "${HEX}")
file(WRITE ${OUT} "#include <stddef.h>\nconst char ${NAME}[] = {${BYTES} 0};\nconst size_t ${NAME}_len = ${LEN};\n")
