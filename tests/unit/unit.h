/* Shared declarations for the CUnit test binaries: each test_*.c defines
 * `unit_suites`, a table ending with { NULL, NULL }; runner.c runs it. */
#ifndef HLOI_TESTS_UNIT_H
#define HLOI_TESTS_UNIT_H

#include <CUnit/CUnit.h>

typedef struct unit_test {
	const char *name;
	void (*fn)(void);
} unit_test;

typedef struct unit_suite {
	const char *name;
	const unit_test *tests;  /* ends with { NULL, NULL } */
} unit_suite;

extern const unit_suite unit_suites[];

#endif
