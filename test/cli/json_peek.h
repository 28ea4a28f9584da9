/*
 * Minimal JSON peeking for the CLI tests (no JSON library is available):
 * find the first "key": anywhere in a text and read the scalar after it.
 * Not a parser; enough to check that the tool's objects have the keys and
 * value types docs/cli.md shows.
 */
#ifndef REDLOCK_TEST_JSON_PEEK_H
#define REDLOCK_TEST_JSON_PEEK_H

#include <stdbool.h>
#include <stddef.h>

/* The value after the first "key": (whitespace skipped), or NULL. */
const char *json_value(const char *json, const char *key);
/* An integer value (not a string, no fraction). */
bool json_int(const char *json, const char *key, long long *out);
/* A string value without escapes, copied to buf (false if it does not fit). */
bool json_string(const char *json, const char *key, char *buf, size_t buflen);
/* Whether text is one line holding one object: "{...}\n". */
bool json_is_one_line_object(const char *text);

#endif
