"""Shell completion scripts (``ansi2048 --completion bash|zsh|fish``).

Written from the argparse parser itself, so they cannot drift from the
options: every option, the choices of those that have them (themes, colour
modes, shells), file names for those whose value is a ``FILE`` (``--record``,
``--cast``), and nothing to offer for values of the user's own (``--seed N``).
A parser in, a script out; ``write_script`` is the one function that writes.
Loaded only when ``--completion`` is given.
"""

from __future__ import annotations

import argparse
import io
import os
import re
from dataclasses import dataclass
from typing import IO, Callable, Dict, List, Optional, Tuple

from .. import __version__

__all__ = ["WRITERS", "CompletedOption", "completed_options", "completion_script", "write_script"]

PROG = "ansi2048"

# What may appear unquoted in a script: option names and choices are checked
# against it, so no value can smuggle shell syntax into a completion script.
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*|--?[A-Za-z0-9][A-Za-z0-9_-]*")


@dataclass(frozen=True)
class CompletedOption:
    """One option as the completion scripts need it."""

    names: Tuple[str, ...]  # "-h", "--help"
    help: str  # one line
    takes_value: bool
    value: str  # what the value is called (its metavar: N, SECONDS, FILE, ...)
    choices: Tuple[str, ...]  # empty: any value
    files: bool  # the value is a file name (its metavar is FILE)
    exits: bool  # prints something and exits (--help, --version, ...): nothing may follow


def completed_options(parser: argparse.ArgumentParser) -> List[CompletedOption]:
    """The parser's options, in its order."""
    options = []
    for action in parser._actions:
        if not action.option_strings or action.help == argparse.SUPPRESS:
            continue
        text = action.help or ""
        if "%" in text:  # argparse's own help strings may name %(prog)s
            text = text % dict(vars(action), prog=parser.prog)
        choices = tuple(str(choice) for choice in action.choices) if action.choices else ()
        for word in (*action.option_strings, *choices):
            if not _WORD.fullmatch(word):
                raise ValueError(f"{word!r} cannot be written into a completion script unquoted")
        options.append(
            CompletedOption(
                names=tuple(action.option_strings),
                help=" ".join(text.split()),
                takes_value=action.nargs != 0,
                value=action.metavar if isinstance(action.metavar, str) else action.dest,
                choices=choices,
                files=action.metavar == "FILE",
                # --help, --version, --config-path, --completion: argparse's
                # convention for options that act and exit is a suppressed default.
                exits=action.default == argparse.SUPPRESS,
            )
        )
    return options


def _header(shell: str, how: str) -> str:
    return (
        f"# {shell} completion for {PROG} {__version__}, written by `{PROG} --completion {shell}`\n"
        f"# from its own options (write it again after an upgrade).\n{how}"
    )


def bash_script(options: List[CompletedOption]) -> str:
    """A completion function for bash (3.2 and later), registered with ``complete``."""
    cases = []
    for option in options:
        if not option.takes_value:
            continue
        pattern = " | ".join(option.names)
        if option.choices:
            cases.append(f"    {pattern}) _{PROG}_reply \"$prefix\" -W '{' '.join(option.choices)}' ;;")
        elif option.files:
            cases.append(f'    {pattern}) _{PROG}_reply "$prefix" -f ;;')
        else:
            cases.append(f"    {pattern}) ;; # a value of the user's own: nothing to offer")
    words = " ".join(name for option in options for name in option.names)
    how = (
        "# Load it in the shell:  source <(ansi2048 --completion bash)\n"
        "# or for every shell:    ansi2048 --completion bash > ~/.local/share/bash-completion/completions/ansi2048\n"
    )
    case_lines = "\n".join(cases)
    return f"""{_header("bash", how)}
# Adds the matches of `compgen ARGS -- "$cur"` to COMPREPLY, each after PREFIX.
_{PROG}_reply() {{
    local prefix=$1 match
    shift
    [[ $* == -f ]] && compopt -o filenames 2>/dev/null
    while IFS= read -r match; do
        COMPREPLY+=("$prefix$match")
    done < <(compgen "$@" -- "$cur")
}}

_{PROG}() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} prev= prefix=
    ((COMP_CWORD > 0)) && prev=${{COMP_WORDS[COMP_CWORD - 1]}}
    COMPREPLY=()
    # --option=value: bash splits the word at '=' (COMP_WORDBREAKS), or not.
    if [[ $cur == = ]]; then
        cur=
    elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
        prev=${{COMP_WORDS[COMP_CWORD - 2]}}
    elif [[ $cur == --*=* ]]; then
        prev=${{cur%%=*}} prefix=${{cur%%=*}}= cur=${{cur#*=}}
    fi
    case $prev in
{case_lines}
    *) [[ -z $prefix ]] && _{PROG}_reply "" -W '{words}' ;;
    esac
}}

complete -F _{PROG} {PROG}
"""


def _zsh_quote(text: str) -> str:
    """``text`` inside a zsh _arguments description: ``\\ [ ] :`` escaped."""
    return re.sub(r"([\\\[\]:])", r"\\\1", text)


def zsh_script(options: List[CompletedOption]) -> str:
    """A ``#compdef`` function for zsh: autoloaded from $fpath, or sourced."""
    specs = []
    for option in options:
        exclusion = "(- *)" if option.exits else ""
        for name in option.names:
            spec = exclusion + name
            if option.takes_value:
                spec += "=" if name.startswith("--") else "+"
            spec += f"[{_zsh_quote(option.help)}]"
            if option.takes_value:
                if option.choices:
                    action = f"({' '.join(option.choices)})"
                elif option.files:
                    action = "_files"
                else:
                    action = " "  # a value of the user's own: say what, offer nothing
                spec += f":{_zsh_quote(option.value)}:{action}"
            specs.append("        '" + spec.replace("'", "'\\''") + "'")
    how = (
        "# Save it as _ansi2048 in a directory on $fpath, before compinit runs:\n"
        "#   ansi2048 --completion zsh > ~/.zfunc/_ansi2048   (with fpath+=(~/.zfunc) in ~/.zshrc)\n"
        "# or load it after compinit:  source <(ansi2048 --completion zsh)\n"
    )
    arguments = " \\\n".join(specs)
    return f"""#compdef {PROG}
{_header("zsh", how)}
_{PROG}() {{
    _arguments -s -S \\
{arguments}
}}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
    _{PROG} "$@"
else
    compdef _{PROG} {PROG}
fi
"""


def _fish_quote(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def fish_script(options: List[CompletedOption]) -> str:
    """``complete`` commands for fish."""
    lines = [f"complete -c {PROG} -f  # no file names, but for an option that takes one"]
    for option in options:
        line = f"complete -c {PROG}"
        for name in option.names:
            line += f" -l {name[2:]}" if name.startswith("--") else f" -s {name[1:]}"
        if option.choices:
            line += f" -x -a {_fish_quote(' '.join(option.choices))}"
        elif option.files:
            line += " -r -F"
        elif option.takes_value:
            line += " -x"
        lines.append(f"{line} -d {_fish_quote(option.help)}")
    how = (
        "# Load it in the shell:  ansi2048 --completion fish | source\n"
        "# or for every shell:    ansi2048 --completion fish > ~/.config/fish/completions/ansi2048.fish\n"
    )
    return _header("fish", how) + "\n".join(lines) + "\n"


WRITERS: Dict[str, Callable[[List[CompletedOption]], str]] = {
    "bash": bash_script,
    "zsh": zsh_script,
    "fish": fish_script,
}


def completion_script(shell: str, parser: argparse.ArgumentParser) -> str:
    """The completion script for ``shell`` ("bash", "zsh" or "fish")."""
    if shell not in WRITERS:
        raise ValueError(f"no completion for {shell!r}: {', '.join(WRITERS)}")
    return WRITERS[shell](completed_options(parser))


def write_script(script: str, stdout: Optional[IO[str]]) -> None:
    """Writes ``script`` to ``stdout`` as UTF-8 bytes with '\\n' line ends (a shell
    reads no '\\r\\n', and Windows' text streams would add them), straight to
    its descriptor: when the reader is gone, nothing stays buffered for Python
    to fail on again at exit. Raises OSError (or ValueError) when it cannot."""
    if stdout is None:  # Python's own stdout when descriptor 1 was closed
        raise OSError("standard output is closed")
    data = script.encode("utf-8")
    try:
        descriptor = stdout.fileno()
    except io.UnsupportedOperation:  # not a file (a test's StringIO): its own write
        stdout.write(script)
        return
    stdout.flush()
    while data:
        data = data[os.write(descriptor, data) :]
