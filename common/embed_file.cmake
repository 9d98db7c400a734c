# Turn the file IN into a C source OUT defining bmq_config_defaults[] and its length.
file(READ ${IN} HEX HEX)
string(LENGTH "${HEX}" HEXLEN)
math(EXPR LEN "${HEXLEN} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," BYTES "${HEX}")
file(WRITE ${OUT} "#include <stddef.h>\nconst char bmq_config_defaults[] = {${BYTES} 0};\nconst size_t bmq_config_defaults_len = ${LEN};\n")
