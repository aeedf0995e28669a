/* The C++ twin of header_check.c: the same checks compiled as C++11 with
 * -Wall -Wextra -Werror -pedantic. */
#include "header_check.c"
