/* The main shared by the CUnit binaries. It returns the number of failed
 * tests, read before CU_cleanup_registry() (which resets the counts), so
 * ctest sees failures. An optional argument runs one suite. */
#include <stdio.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "unit.h"

int main(int argc, char **argv)
{
	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	for (const unit_suite *s = unit_suites; s->name; s++) {
		if (argc > 1 && strcmp(argv[1], s->name) != 0)
			continue;
		CU_pSuite suite = CU_add_suite(s->name, NULL, NULL);
		if (!suite)
			goto fail;
		for (const unit_test *t = s->tests; t->name; t++)
			if (!CU_add_test(suite, t->name, t->fn))
				goto fail;
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (CU_basic_run_tests() != CUE_SUCCESS)
		goto fail;
	unsigned failed = CU_get_number_of_tests_failed();
	unsigned ran = CU_get_number_of_tests_run();
	CU_cleanup_registry();
	if (ran == 0) {
		fprintf(stderr, "no tests ran\n");
		return 2;
	}
	return failed > 255 ? 255 : (int)failed;
fail:
	fprintf(stderr, "CUnit error: %s\n", CU_get_error_msg());
	CU_cleanup_registry();
	return 2;
}
