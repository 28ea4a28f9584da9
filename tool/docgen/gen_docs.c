/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * redlock-gen-docs MANPAGE MARKDOWN: write the tool's manual (manual.h),
 * as roff to MANPAGE (redlock.1) and as Markdown to MARKDOWN (cli.md).
 * Run by the build (not installed); `cmake --build BUILD --target
 * update-docs` copies both into the sources (man/, docs/).
 *
 * The manual's sections go out in order. The entries of a list read: the
 * help (what --help shows of it, from a capital, with a full stop), then
 * the details; an option's end with the commands that take it. The
 * configuration keys are the YAML loader's own (src/config/config_yaml.c),
 * each with its line of the manual.
 */
#include "writer.h"

#include "../markup.h"
#include "config/config_internal.h" /* the YAML loader's keys */

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static bool failed;

void doc_fail(const char *fmt, ...)
{
    va_list ap;
    fputs("redlock-gen-docs: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): started above
    va_end(ap);
    fputc('\n', stderr);
    failed = true;
}

static void *checked(void *p)
{
    if (p == NULL) {
        fputs("redlock-gen-docs: out of memory\n", stderr);
        exit(1);
    }
    return p;
}

char *doc_format(const char *fmt, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&s, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized): started above
    va_end(ap);
    return checked(n < 0 ? NULL : s);
}

char *doc_synopsis(const cli_command *cmd, bool long_forms)
{
    char buf[1024];
    if (!cli_synopsis(cmd, long_forms, buf, sizeof(buf)))
        doc_fail("the synopsis of %s is too long", cmd->name ? cmd->name : "redlock");
    return doc_format("%s", buf);
}

char *doc_alone_synopsis(const cli_option *option)
{
    return doc_format("`--%s`%s", option->name,
                      option->flags & CLI_OPT_HELP ? " | *COMMAND* `--help`" : "");
}

void doc_each_synopsis(FILE *out, const cli_command *tool,
                       void (*put)(FILE *out, const char *name, const char *markup))
{
    char *line = doc_synopsis(tool, false);
    put(out, "redlock", line);
    free(line);
    for (size_t i = 0; i < tool->command_count; i++) {
        char *name = doc_format("redlock %s", tool->commands[i]->name);
        line = doc_synopsis(tool->commands[i], false);
        put(out, name, line);
        free(line);
        free(name);
    }
    for (size_t i = 0; i < tool->option_count; i++) {
        if (!(tool->options[i]->flags & CLI_OPT_ALONE))
            continue;
        line = doc_alone_synopsis(tool->options[i]);
        put(out, "redlock", line);
        free(line);
    }
}

char *doc_plain(const char *markup)
{
    size_t len = strlen(markup);
    char *plain = checked(malloc(len + 1));
    markup_plain(markup, len, plain);
    return plain;
}

/* help (from a capital, with a full stop), details and more, each if not
 * NULL: one paragraph of markup. */
static char *compose(const char *help, const char *details, const char *more)
{
    char *first = NULL;
    if (help != NULL) {
        size_t len = strlen(help);
        first = doc_format("%s%s", help, len > 0 && help[len - 1] == '.' ? "" : ".");
        if (islower((unsigned char)first[0]))
            first[0] = (char)toupper((unsigned char)first[0]);
    }
    char *text = doc_format("%s%s%s%s%s", first ? first : "", first && details ? " " : "",
                            details ? details : "", (first || details) && more ? " " : "",
                            more ? more : "");
    free(first);
    return text;
}

static void free_items(doc_item *items, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        free(items[i].term);
        free(items[i].text);
    }
    free(items);
}

static size_t entry_count(const doc_entry *entries)
{
    size_t n = 0;
    while (entries[n].term != NULL)
        n++;
    return n;
}

/* A list's entries; in a table, the help is a mere label for --help. */
static void write_entries(FILE *out, const doc_writer *w, const doc_part *part)
{
    size_t n = entry_count(part->entries);
    doc_item *items = checked(calloc(n + 1, sizeof(*items)));
    for (size_t i = 0; i < n; i++) {
        const doc_entry *e = &part->entries[i];
        items[i].term = doc_format("%s", e->term);
        items[i].text = part->kind == DOC_TABLE ? compose(NULL, e->details, NULL)
                                                : compose(e->help, e->details, NULL);
    }
    if (part->kind == DOC_TABLE)
        w->table(out, part->text, items, n);
    else
        w->definitions(out, items, n);
    free_items(items, n);
}

/* ---- Configuration keys -------------------------------------------------------- */

/* The line of key in entries, or NULL. */
static const doc_entry *key_line(const doc_entry *entries, const char *key)
{
    for (const doc_entry *e = entries; e->term != NULL; e++)
        if (strcmp(e->term, key) == 0)
            return e;
    return NULL;
}

/* Whether the loader's table (node or top level) has key. */
static bool loader_has_key(bool node, const char *key)
{
    char name[128];
    for (size_t i = 0; i < rl_yaml_key_count(node); i++) {
        const char *k = rl_yaml_key_name(node, i, name, sizeof(name));
        if (k != NULL && strcmp(k, key) == 0)
            return true;
    }
    return false;
}

/* Every key of the YAML loader's table (the top level's, or a node's: the
 * part's entries say which), in its order, with its line; an `_ms` key's
 * duration form beside it. A key without a line, or a line without its
 * key, fails the generation. */
static void write_config_keys(FILE *out, const doc_writer *w, const doc_part *part)
{
    bool node = part->entries == cli_config_node_keys;
    const char *table = node ? "cli_config_node_keys" : "cli_config_top_keys";
    size_t count = rl_yaml_key_count(node);
    doc_item *items = checked(calloc(count + 1, sizeof(*items)));
    size_t n = 0;
    for (size_t i = 0; i < count; i++) {
        char name[128];
        const char *key = rl_yaml_key_name(node, i, name, sizeof(name));
        if (key == NULL)
            continue;
        char *with_ms = doc_format("%s_ms", key);
        bool duration_form = loader_has_key(node, with_ms);
        free(with_ms);
        if (duration_form) /* shown beside its `_ms` key */
            continue;
        const doc_entry *line = key_line(part->entries, key);
        if (line == NULL) {
            doc_fail("the config key %s%s has no line in tool/manual.c (%s)",
                     node ? "nodes[]." : "", key, table);
            continue;
        }
        size_t len = strlen(key);
        char *duration = len > 3 && strcmp(key + len - 3, "_ms") == 0
                             ? doc_format("%.*s", (int)(len - 3), key)
                             : NULL;
        if (duration != NULL && loader_has_key(node, duration))
            items[n].term = doc_format("`%s`, `%s`", key, duration);
        else
            items[n].term = doc_format("`%s`", key);
        free(duration);
        items[n].text = compose(NULL, line->details, NULL);
        n++;
    }
    for (const doc_entry *e = part->entries; e->term != NULL; e++)
        if (!loader_has_key(node, e->term))
            doc_fail("tool/manual.c (%s) has a line for %s, which is no config key", table,
                     e->term);
    w->table(out, part->text, items, n);
    free_items(items, n);
}

/* ---- Options ---------------------------------------------------------------- */

static bool takes(const cli_command *cmd, const cli_option *option)
{
    for (size_t i = 0; i < cmd->option_count; i++)
        if (cmd->options[i] == option)
            return true;
    return false;
}

/* "For `run`, `acquire` and `extend`.": the commands that take option. */
static char *commands_taking(const cli_command *tool, const cli_option *option)
{
    size_t n = 0;
    for (size_t i = 0; i < tool->command_count; i++)
        n += takes(tool->commands[i], option);
    if (n == tool->command_count)
        return doc_format("For every command.");
    char *list = doc_format("For");
    size_t listed = 0;
    for (size_t i = 0; i < tool->command_count; i++) {
        if (!takes(tool->commands[i], option))
            continue;
        listed++;
        const char *sep = listed == 1 ? " " : listed == n ? " and " : ", ";
        char *longer = doc_format("%s%s`%s`", list, sep, tool->commands[i]->name);
        free(list);
        list = longer;
    }
    char *sentence = doc_format("%s.", list);
    free(list);
    return sentence;
}

/* "`-t` *TIME*, `--ttl` *TIME*" */
static char *option_term(const cli_option *o)
{
    char *value = o->value ? doc_format(" *%s*", o->value) : doc_format("%s", "");
    char *term = o->short_name ? doc_format("`-%c`%s, `--%s`%s", o->short_name, value, o->name,
                                            value)
                               : doc_format("`--%s`%s", o->name, value);
    free(value);
    return term;
}

static bool in_list(const cli_option *const *list, size_t n, const cli_option *option)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == option)
            return true;
    return false;
}

/* The options of every command, each once, in the order they come, the
 * help last; into list (room for all), returns how many. */
static size_t every_commands_options(const cli_command *tool, const cli_option **list)
{
    size_t n = 0;
    for (int help_pass = 0; help_pass < 2; help_pass++) {
        for (size_t c = 0; c < tool->command_count; c++) {
            const cli_command *cmd = tool->commands[c];
            for (size_t i = 0; i < cmd->option_count; i++) {
                const cli_option *o = cmd->options[i];
                bool is_help = (o->flags & CLI_OPT_HELP) != 0;
                if (is_help == (help_pass == 1) && !in_list(list, n, o))
                    list[n++] = o;
            }
        }
    }
    return n;
}

/* The options of cmd; of every command when cmd is NULL, each with the
 * commands that take it. */
static void write_options(FILE *out, const doc_writer *w, const cli_command *cmd)
{
    const cli_command *tool = &cli_tool;
    size_t most = tool->option_count;
    for (size_t i = 0; i < tool->command_count; i++)
        most += tool->commands[i]->option_count;
    const cli_option **list = checked(calloc(most + 1, sizeof(const cli_option *)));
    size_t n = 0;
    if (cmd != NULL) {
        for (; n < cmd->option_count; n++)
            list[n] = cmd->options[n];
    } else {
        n = every_commands_options(tool, list);
    }
    doc_item *items = checked(calloc(n + 1, sizeof(*items)));
    for (size_t i = 0; i < n; i++) {
        char *more = cmd == NULL ? commands_taking(tool, list[i]) : NULL;
        items[i].term = option_term(list[i]);
        items[i].text = compose(list[i]->help, list[i]->details, more);
        free(more);
    }
    w->definitions(out, items, n);
    free_items(items, n);
    free(list);
}

/* ---- The manual ----------------------------------------------------------------- */

static void write_part(FILE *out, const doc_writer *w, const doc_part *part)
{
    switch (part->kind) {
    case DOC_TEXT:
        w->text(out, part->text);
        break;
    case DOC_SUBSECTION:
        w->subsection(out, part->text);
        break;
    case DOC_DEFINITIONS:
    case DOC_TABLE:
        write_entries(out, w, part);
        break;
    case DOC_CONFIG_KEYS:
        write_config_keys(out, w, part);
        break;
    case DOC_SYNOPSIS:
        w->synopsis(out, part->command);
        break;
    case DOC_COMMANDS:
        for (size_t i = 0; i < part->command->command_count; i++)
            w->command(out, part->command->commands[i]);
        break;
    case DOC_OPTIONS:
        write_options(out, w, part->command);
        break;
    }
}

static bool write_file(const char *path, const doc_writer *w)
{
    char *tmp = doc_format("%s.tmp", path);
    FILE *out = fopen(tmp, "w");
    if (out == NULL) {
        doc_fail("%s: cannot write", tmp);
        free(tmp);
        return false;
    }
    w->begin(out, &cli_manual);
    for (size_t s = 0; s < cli_manual.section_count; s++) {
        const doc_section *section = &cli_manual.sections[s];
        w->section(out, section->title);
        for (size_t p = 0; p < section->part_count; p++)
            write_part(out, w, &section->parts[p]);
    }
    w->end(out);
    bool written = !ferror(out);
    written = fclose(out) == 0 && written;
    if (!written)
        doc_fail("%s: write error", tmp);
    if (!failed && rename(tmp, path) != 0)
        doc_fail("%s: cannot rename to %s", tmp, path);
    if (failed) {
        remove(tmp);
        doc_fail("%s (%s) not written", path, w->format);
    }
    free(tmp);
    return !failed;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fputs("usage: redlock-gen-docs MANPAGE MARKDOWN\n", stderr);
        return 2;
    }
    return write_file(argv[1], &doc_roff) && write_file(argv[2], &doc_markdown) ? 0 : 1;
}
