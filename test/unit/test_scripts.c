/* Formatted requests, and the EVAL fallback built from an EVALSHA. */
#include "scripts.h"

#include <criterion/criterion.h>
#include <hiredis/hiredis.h>
#include <stdlib.h>
#include <string.h>

static void assert_same_bytes(const char *a, long alen, const char *b, long blen)
{
    cr_assert_eq(alen, blen, "lengths %ld and %ld", alen, blen);
    cr_assert_eq(memcmp(a, b, (size_t)alen), 0);
}

Test(scripts, eval_fallback_keeps_binary_arguments)
{
    static const char key[] = {'k', '\0', '\n', 'y'};
    static const char value[] = "v a l";
    char *evalsha = NULL, *eval = NULL, *expected = NULL;
    int len = rl_format_extend(&evalsha, key, sizeof(key), value, 5, 1234);
    cr_assert_gt(len, 0);
    long eval_len = rl_evalsha_to_eval(evalsha, (size_t)len, &rl_extend_script, &eval);
    int expected_len = redisFormatCommand(&expected, "EVAL %s 1 %b %b %lld",
                                          rl_extend_script.source, key, sizeof(key), value,
                                          (size_t)5, 1234LL);
    assert_same_bytes(eval, eval_len, expected, expected_len);
    free(eval);
    redisFreeCommand(evalsha);
    redisFreeCommand(expected);
}

Test(scripts, eval_fallback_for_release)
{
    char *evalsha = NULL, *eval = NULL, *expected = NULL;
    int len = rl_format_release(&evalsha, "res", 3, "val", 3);
    long eval_len = rl_evalsha_to_eval(evalsha, (size_t)len, &rl_release_script, &eval);
    int expected_len = redisFormatCommand(&expected, "EVAL %s 1 res val", rl_release_script.source);
    assert_same_bytes(eval, eval_len, expected, expected_len);
    free(eval);
    redisFreeCommand(evalsha);
    redisFreeCommand(expected);
}

Test(scripts, eval_fallback_refuses_other_commands)
{
    char *cmd = NULL, *eval = NULL;
    int len = rl_format_acquire(&cmd, "res", 3, "val", 3, 1000);
    cr_assert_eq(rl_evalsha_to_eval(cmd, (size_t)len, &rl_release_script, &eval), -1);
    cr_assert_null(eval);
    redisFreeCommand(cmd);
    /* An EVALSHA of the other script is refused too. */
    len = rl_format_release(&cmd, "res", 3, "val", 3);
    cr_assert_eq(rl_evalsha_to_eval(cmd, (size_t)len, &rl_extend_script, &eval), -1);
    redisFreeCommand(cmd);
}

Test(scripts, acquire_is_set_nx_px)
{
    char *cmd = NULL, *expected = NULL;
    int len = rl_format_acquire(&cmd, "r", 1, "v", 1, 30000);
    int expected_len = redisFormatCommand(&expected, "SET r v NX PX 30000");
    assert_same_bytes(cmd, len, expected, expected_len);
    redisFreeCommand(cmd);
    redisFreeCommand(expected);
}

Test(scripts, shas_are_40_hex_digits)
{
    cr_assert_eq(strlen(rl_release_script.sha), 40);
    cr_assert_eq(strspn(rl_extend_script.sha, "0123456789abcdef"), 40);
    cr_assert_str_neq(rl_release_script.sha, rl_extend_script.sha);
}
