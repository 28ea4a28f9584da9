/* SPDX-License-Identifier: BSD-3-Clause */
/* The redlock tool's text for messages: any bytes become one short line. */
#include "cli.h"

#include <criterion/criterion.h>
#include <string.h>

static const char *shown(const char *s, size_t size)
{
    static char buf[256];
    cr_assert_leq(size, sizeof(buf));
    memset(buf, '#', sizeof(buf));
    return cli_shown(buf, size, s);
}

Test(cli_output, plain_text_is_shown_as_is)
{
    cr_assert_str_eq(shown("nightly-report", 100), "nightly-report");
    cr_assert_str_eq(shown("", 100), "");
    cr_assert_str_eq(shown("a\\b \"c\"", 100), "a\\b \"c\"");
}

Test(cli_output, controls_and_non_ascii_are_escaped)
{
    cr_assert_str_eq(shown("a\nb\rc\td\x1b[2J\x7f", 100), "a\\x0ab\\x0dc\\x09d\\x1b[2J\\x7f");
    cr_assert_str_eq(shown("caf\xc3\xa9", 100), "caf\\xc3\\xa9");
}

Test(cli_output, what_does_not_fit_is_cut)
{
    /* Exactly full: 9 bytes and the NUL. */
    cr_assert_str_eq(shown("123456789", 10), "123456789");
    cr_assert_str_eq(shown("1234567890", 10), "123456...");
    /* An escape is never cut in two. */
    cr_assert_str_eq(shown("12345\n7890", 10), "12345...");
    cr_assert_str_eq(shown("\n\n\n", 10), "\\x0a...");
    cr_assert_str_eq(shown("\n\n", 10), "\\x0a\\x0a");
}
