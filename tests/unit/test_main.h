/*
 * test_main.h — the main() every unit test program has: its cmocka tests
 * run as one group, with no group set-up or tear-down; the exit status is
 * the number of tests that failed.  Include after <cmocka.h>:
 *   TEST_MAIN(cmocka_unit_test(test_a), cmocka_unit_test(test_b))
 * A macro, not a function: the list sizes the array that
 * cmocka_run_group_tests counts.
 */
#ifndef TESS_TESTS_TEST_MAIN_H
#define TESS_TESTS_TEST_MAIN_H

#define TEST_MAIN(...)                                    \
    int main(void)                                        \
    {                                                     \
        const struct CMUnitTest tests[] = {__VA_ARGS__};  \
        return cmocka_run_group_tests(tests, NULL, NULL); \
    }

#endif
