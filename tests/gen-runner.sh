#!/bin/sh
# Writes the unit-test runner: a main() that adds every "Suite *NAME_suite(void)" defined in the
# given tests/check_*.c files to one SRunner. CK_RUN_SUITE / CK_RUN_CASE select, as Check does.
suites=$(sed -n 's/^Suite \*\([a-z0-9_]*_suite\)(void)$/\1/p' "$@")
echo '#include <check.h>'
echo '#include <stdlib.h>'
for s in $suites; do echo "Suite *$s(void);"; done
echo 'int main(void)'
echo '{'
echo '	SRunner *sr = srunner_create(NULL);'
for s in $suites; do echo "	srunner_add_suite(sr, $s());"; done
echo '	srunner_run_all(sr, CK_NORMAL);'
echo '	int failed = srunner_ntests_failed(sr);'
echo '	srunner_free(sr);'
echo '	return failed ? EXIT_FAILURE : EXIT_SUCCESS;'
echo '}'
