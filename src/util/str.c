/* Small string helpers the library shares. */
#include "util/str.h"

#include <string.h>

int str_has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}
