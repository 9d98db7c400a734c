/* common/retry: Retry-After header lines as libcurl hands them over, and the
 * back-off (exponential, capped, equal jitter) every outside-API client uses. */
#include "retry.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

static int s_header (const char *line)
{
    return bmq_retry_after_header (line, strlen (line));
}

static void test_retry_after_header (void **state)
{
    (void) state;
    assert_int_equal (s_header ("Retry-After: 3\r\n"), 3000);
    assert_int_equal (s_header ("retry-after:0\r\n"), 0);
    assert_int_equal (s_header ("RETRY-AFTER: \t 12 \r\n"), 12000);
    assert_int_equal (s_header ("Retry-After: 86399\r\n"), 86399000);
    assert_int_equal (s_header ("Retry-After: 86400\r\n"), -1);                        /* a day or more: ignored */
    assert_int_equal (s_header ("Retry-After: 99999999999999999999\r\n"), -1);         /* no overflow */
    assert_int_equal (s_header ("Retry-After: Wed, 21 Oct 2026 07:28:00 GMT\r\n"), -1); /* a date: the back-off decides */
    assert_int_equal (s_header ("Retry-After: -5\r\n"), -1);
    assert_int_equal (s_header ("Retry-After:\r\n"), -1);
    assert_int_equal (s_header ("Content-Type: application/json\r\n"), -1);
    assert_int_equal (s_header ("Retry-After"), -1);
    assert_int_equal (bmq_retry_after_header (NULL, 0), -1);
    assert_int_equal (bmq_retry_after_header ("Retry-After: 7", 13), -1);             /* the length given is what counts */
}

static void test_delay (void **state)
{
    (void) state;
    /* a server's Retry-After wins, capped */
    assert_int_equal (bmq_retry_delay_ms (0, 500, 8000, 2000, 30000), 2000);
    assert_int_equal (bmq_retry_delay_ms (5, 500, 8000, 0, 30000), 0);
    assert_int_equal (bmq_retry_delay_ms (0, 500, 8000, 90000, 30000), 30000);
    /* otherwise base × 2^attempt, capped, with equal jitter: within [d/2, d] */
    int want[] = { 500, 1000, 2000, 4000, 8000, 8000, 8000 };
    for (int a = 0; a < 7; a++)
        for (int k = 0; k < 200; k++) {
            int d = bmq_retry_delay_ms (a, 500, 8000, -1, 30000);
            assert_true (d >= want[a] / 2 && d <= want[a]);
        }
    /* not every delay the same: clients that failed together spread out */
    int first = bmq_retry_delay_ms (3, 500, 8000, -1, 30000), differ = 0;
    for (int k = 0; k < 50; k++) differ |= bmq_retry_delay_ms (3, 500, 8000, -1, 30000) != first;
    assert_true (differ);
    /* an unset base is 500 ms; attempts far past the cap stay at it */
    int d = bmq_retry_delay_ms (0, 0, 8000, -1, 30000);
    assert_true (d >= 250 && d <= 500);
    d = bmq_retry_delay_ms (1000, 500, 8000, -1, 30000);
    assert_true (d >= 4000 && d <= 8000);
}

int main (void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test (test_retry_after_header),
        cmocka_unit_test (test_delay),
    };
    return cmocka_run_group_tests (tests, NULL, NULL);
}
