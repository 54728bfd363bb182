/* Small string helpers the library shares. */
#ifndef HLOI_UTIL_STR_H
#define HLOI_UTIL_STR_H

/* Whether `s` ends in `suffix`. */
int str_has_suffix(const char *s, const char *suffix);

#endif
