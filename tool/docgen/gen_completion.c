/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * redlock-gen-completion BASH ZSH: write the shell completion of the tool,
 * for bash (installed as bash-completion/completions/redlock) and zsh
 * (zsh/vendor-completions/_redlock), from the command table (cli_command.h)
 * that --help and the manual come from: the commands, redlock's own
 * options, and each command's (with redlock's, which may follow the
 * command's name). An option's value is completed by its kind: a file for
 * *FILE*, nothing for the others (a *TIME*, a *MASTER*, ...); a flag takes
 * none. In `run`, the word after `--` is a command and the rest are its
 * arguments. Run by the build; `cmake --build BUILD --target update-docs`
 * copies both into the sources (completion/).
 */
#include "../cli_command.h"
#include "../markup.h"

#include <stdlib.h>
#include <string.h>

static bool failed;

static void fail(const char *what)
{
    fprintf(stderr, "redlock-gen-completion: %s\n", what);
    failed = true;
}

/* Options whose value is a file name. */
static bool takes_file(const cli_option *o)
{
    return o->value != NULL && strcmp(o->value, "FILE") == 0;
}

/* What --help says of o, plain, up to its first " (" or ";": a short
 * description for zsh, into buf. */
static void short_help(const cli_option *o, char *buf, size_t size)
{
    size_t len = strlen(o->help);
    char *plain = malloc(len + 1);
    if (plain == NULL) {
        fail("out of memory");
        buf[0] = '\0';
        return;
    }
    markup_plain(o->help, len, plain);
    plain[strcspn(plain, ";(:")] = '\0';
    len = strlen(plain);
    while (len > 0 && (plain[len - 1] == ' ' || plain[len - 1] == ',' || plain[len - 1] == '.'))
        plain[--len] = '\0';
    snprintf(buf, size, "%s", plain);
    free(plain);
}

/* s inside single quotes for both shells; with escape_spec, the brackets
 * that would end an _arguments description escaped (short_help() leaves
 * no colon). */
static void put_quoted(FILE *out, const char *s, bool escape_spec)
{
    for (const char *p = s; *p; p++) {
        if (*p == '\'')
            fputs("'\\''", out);
        else if (escape_spec && (*p == '[' || *p == ']'))
            fprintf(out, "\\%c", *p);
        else
            fputc(*p, out);
    }
}

/* ---- bash ------------------------------------------------------------------- */

/* " -t --ttl" for each option of cmd (and those of globals but the ones
 * used alone), those taking a value (with_value) or not. */
static void bash_words(FILE *out, const cli_command *cmd, const cli_command *globals,
                       int with_value)
{
    const cli_command *sets[2] = {cmd, globals};
    for (size_t s = 0; s < 2; s++) {
        if (sets[s] == NULL)
            continue;
        for (size_t i = 0; i < sets[s]->option_count; i++) {
            const cli_option *o = sets[s]->options[i];
            if (sets[s] == globals && (o->flags & CLI_OPT_ALONE))
                continue;
            if (with_value >= 0 && (o->value != NULL) != (with_value == 1))
                continue;
            if (o->short_name != 0)
                fprintf(out, " -%c", o->short_name);
            fprintf(out, " --%s", o->name);
        }
    }
}

/* Every option of redlock and of its commands, each once, into list (of
 * room); how many. */
static size_t every_option(const cli_option **list, size_t room)
{
    const cli_command *tool = &cli_tool;
    size_t n = 0;
    for (size_t c = 0; c <= tool->command_count; c++) {
        const cli_command *cmd = c == 0 ? tool : tool->commands[c - 1];
        for (size_t i = 0; i < cmd->option_count; i++) {
            bool seen = false;
            for (size_t k = 0; k < n && !seen; k++)
                seen = list[k] == cmd->options[i];
            if (seen)
                continue;
            if (n == room) {
                fail("more options than the generator has room for");
                return n;
            }
            list[n++] = cmd->options[i];
        }
    }
    return n;
}

/* "-c|--config" for every option taking a file (file) or another value. */
static void bash_value_pattern(FILE *out, bool file)
{
    const cli_option *options[256];
    size_t n = every_option(options, ARRAY_SIZE(options));
    const char *sep = "";
    for (size_t i = 0; i < n; i++) {
        const cli_option *o = options[i];
        if (o->value == NULL || takes_file(o) != file)
            continue;
        if (o->short_name != 0) {
            fprintf(out, "%s-%c", sep, o->short_name);
            sep = "|";
        }
        fprintf(out, "%s--%s", sep, o->name);
        sep = "|";
    }
    if (*sep == '\0') /* no such option: a pattern nothing matches */
        fputs("--no-such-option-", out);
}

/* The value of an option before cur: a file, or nothing to offer. */
static void bash_value_case(FILE *out, const char *indent)
{
    fprintf(out, "%scase $prev in\n%s", indent, indent);
    bash_value_pattern(out, true);
    fprintf(out,
            ")\n"
            "%s    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
            "%s    compopt -o filenames 2>/dev/null\n"
            "%s    return 0\n"
            "%s    ;;\n"
            "%s",
            indent, indent, indent, indent, indent);
    bash_value_pattern(out, false);
    fprintf(out, ")\n%s    return 0\n%s    ;;\n%sesac\n", indent, indent, indent);
}

static void write_bash(FILE *out)
{
    const cli_command *tool = &cli_tool;
    fputs("# bash completion for redlock                             -*- shell-script -*-\n"
          "# SPDX-License-Identifier: BSD-3-Clause\n"
          "# Generated from the tool's command table (tool/commands.c) by\n"
          "# redlock-gen-completion; do not edit: cmake --build BUILD --target update-docs.\n"
          "\n"
          "_redlock()\n"
          "{\n"
          "    local cur=${COMP_WORDS[COMP_CWORD]} prev=\n"
          "    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}\n"
          "    COMPREPLY=()\n"
          "\n"
          "    # The command: the first word that is neither an option nor its value;\n"
          "    # then its operands, and the first --.\n"
          "    local i word command= operands=0 dashdash=0\n"
          "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
          "        word=${COMP_WORDS[i]}\n"
          "        if [[ -z $command || $dashdash == 0 ]]; then\n"
          "            case $word in\n"
          "            --) [[ -n $command ]] && dashdash=$i ;;\n"
          "            ",
          out);
    bash_value_pattern(out, true);
    fputc('|', out);
    bash_value_pattern(out, false);
    fputs(") ((i++)) ;;\n"
          "            -*) ;;\n"
          "            *) if [[ -z $command ]]; then command=$word; else ((operands++)); fi ;;\n"
          "            esac\n"
          "        fi\n"
          "    done\n"
          "\n"
          "    if [[ -z $command ]]; then\n",
          out);
    bash_value_case(out, "        ");
    fputs("        if [[ $cur == -* ]]; then\n"
          "            COMPREPLY=($(compgen -W '",
          out);
    bash_words(out, tool, NULL, -1);
    fputs("' -- \"$cur\"))\n"
          "        else\n"
          "            COMPREPLY=($(compgen -W '",
          out);
    for (size_t c = 0; c < tool->command_count; c++)
        fprintf(out, " %s", tool->commands[c]->name);
    fputs("' -- \"$cur\"))\n"
          "        fi\n"
          "        return 0\n"
          "    fi\n"
          "\n",
          out);
    /* run's CMD: after `--`, a command, then its arguments (files); no
     * option of redlock's after the first operand. */
    for (size_t c = 0; c < tool->command_count; c++) {
        const cli_command *cmd = tool->commands[c];
        if (!cmd->options_first)
            continue;
        fprintf(out,
                "    if [[ $command == %s ]] && ((dashdash > 0)); then\n"
                "        if ((COMP_CWORD == dashdash + 1)); then\n"
                "            COMPREPLY=($(compgen -c -- \"$cur\"))\n"
                "        else\n"
                "            COMPREPLY=($(compgen -f -- \"$cur\"))\n"
                "            compopt -o filenames 2>/dev/null\n"
                "        fi\n"
                "        return 0\n"
                "    fi\n"
                "    [[ $command == %s ]] && ((operands > 0)) && return 0\n"
                "\n",
                cmd->name, cmd->name);
    }
    bash_value_case(out, "    ");
    fputs("    [[ $cur == -* ]] || return 0\n"
          "    case $command in\n",
          out);
    for (size_t c = 0; c < tool->command_count; c++) {
        const cli_command *cmd = tool->commands[c];
        fprintf(out, "    %s) COMPREPLY=($(compgen -W '", cmd->name);
        bash_words(out, cmd, tool, -1);
        fputs("' -- \"$cur\")) ;;\n", out);
    }
    fputs("    esac\n"
          "    return 0\n"
          "} &&\n"
          "    complete -F _redlock redlock\n",
          out);
}

/* ---- zsh --------------------------------------------------------------------- */

/* One _arguments spec line for o, after indent, ended by end:
 * '(-t --ttl)'{-t+,--ttl=}'[help]:time: ' */
static void zsh_option(FILE *out, const cli_option *o, const char *indent, const char *end)
{
    char help[256];
    short_help(o, help, sizeof(help));
    const char *with_value = o->value ? "+" : "";
    const char *long_value = o->value ? "=" : "";
    const char *repeat = (o->flags & CLI_OPT_REPEATABLE) ? "*" : "";
    fputs(indent, out);
    if ((o->flags & CLI_OPT_ALONE) && o->short_name != 0) /* nothing else with it */
        fprintf(out, "'(- *)'{-%c,--%s}'[", o->short_name, o->name);
    else if (o->flags & CLI_OPT_ALONE)
        fprintf(out, "'(- *)--%s[", o->name);
    else if (o->short_name != 0 && *repeat == '\0')
        fprintf(out, "'(-%c --%s)'{-%c%s,--%s%s}'[", o->short_name, o->name, o->short_name,
                with_value, o->name, long_value);
    else if (o->short_name != 0)
        fprintf(out, "'%s'{-%c%s,--%s%s}'[", repeat, o->short_name, with_value, o->name,
                long_value);
    else
        fprintf(out, "'%s--%s%s[", repeat, o->name, long_value);
    put_quoted(out, help, true);
    fputc(']', out);
    if (o->value != NULL) {
        char kind[64];
        snprintf(kind, sizeof(kind), "%s", o->value);
        for (char *p = kind; *p; p++)
            *p = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        fprintf(out, ":%s:%s", kind, takes_file(o) ? "_files" : " ");
    }
    fprintf(out, "'%s", end);
}

static void write_zsh(FILE *out)
{
    const cli_command *tool = &cli_tool;
    fputs("#compdef redlock\n"
          "# SPDX-License-Identifier: BSD-3-Clause\n"
          "# zsh completion for redlock, generated from the tool's command table\n"
          "# (tool/commands.c) by redlock-gen-completion; do not edit: cmake --build\n"
          "# BUILD --target update-docs.\n"
          "\n"
          "_redlock() {\n"
          "    local curcontext=$curcontext state line ret=1\n"
          "    typeset -A opt_args\n"
          "    # redlock's own options; all but --help and --version also after a command.\n"
          "    local -a alone common\n"
          "    alone=(\n",
          out);
    for (size_t i = 0; i < tool->option_count; i++)
        if (tool->options[i]->flags & CLI_OPT_ALONE)
            zsh_option(out, tool->options[i], "        ", "\n");
    fputs("    )\n"
          "    common=(\n",
          out);
    for (size_t i = 0; i < tool->option_count; i++)
        if (!(tool->options[i]->flags & CLI_OPT_ALONE))
            zsh_option(out, tool->options[i], "        ", "\n");
    fputs("    )\n"
          "    _arguments -C -s -S $alone $common ': :->command' '*:: :->args' && ret=0\n"
          "\n"
          "    case $state in\n"
          "    command)\n"
          "        local -a commands\n"
          "        commands=(\n",
          out);
    for (size_t c = 0; c < tool->command_count; c++) {
        const cli_command *cmd = tool->commands[c];
        size_t len = strlen(cmd->brief);
        char *plain = malloc(len + 1);
        if (plain == NULL) {
            fail("out of memory");
            return;
        }
        markup_plain(cmd->brief, len, plain);
        fprintf(out, "            '%s:", cmd->name);
        put_quoted(out, plain, false);
        fputs("'\n", out);
        free(plain);
    }
    fputs("        )\n"
          "        _describe -t commands 'redlock command' commands && ret=0\n"
          "        ;;\n"
          "    args)\n"
          "        curcontext=${curcontext%:*:*}:redlock-$words[1]:\n"
          "        case $words[1] in\n",
          out);
    for (size_t c = 0; c < tool->command_count; c++) {
        const cli_command *cmd = tool->commands[c];
        fprintf(out, "        %s)\n", cmd->name);
        fprintf(out, "            _arguments -s -S %s$common \\\n",
                cmd->options_first ? "-A '-*' " : "");
        for (size_t i = 0; i < cmd->option_count; i++)
            zsh_option(out, cmd->options[i], "                ", " \\\n");
        if (cmd->options_first)
            fputs("                '1:resource: ' '*:: :_normal' && ret=0\n", out);
        else if (cmd->operand_count == 0)
            fputs("                && ret=0\n", out);
        else
            fputs("                '*:operand: ' && ret=0\n", out);
        fputs("            ;;\n", out);
    }
    fputs("        esac\n"
          "        ;;\n"
          "    esac\n"
          "    return ret\n"
          "}\n"
          "\n"
          "_redlock \"$@\"\n",
          out);
}

static bool write_file(const char *path, void (*write)(FILE *out))
{
    FILE *out = fopen(path, "w");
    if (out == NULL) {
        fprintf(stderr, "redlock-gen-completion: %s: cannot write\n", path);
        return false;
    }
    write(out);
    bool ok = !ferror(out);
    ok = fclose(out) == 0 && ok;
    if (!ok || failed) {
        fprintf(stderr, "redlock-gen-completion: %s: not written\n", path);
        remove(path);
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fputs("usage: redlock-gen-completion BASH ZSH\n", stderr);
        return 2;
    }
    return write_file(argv[1], write_bash) && write_file(argv[2], write_zsh) ? 0 : 1;
}
