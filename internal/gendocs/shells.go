package gendocs

// The bash and zsh completions: shell functions that hold the CLI's tree
// (shared: the same text is valid in both), then each shell's own driver,
// which walks the words typed so far through that tree. Profile, seccomp
// policy and session names are asked of jail itself when completing, so
// the user's own profiles complete too.

import (
	"fmt"
	"strings"
)

// shTables are the tree's lookups as sh functions, by a command's path
// ("" for jail itself):
//
//	_jail_sub PATH WORD   the canonical name if WORD is a subcommand there
//	_jail_subs PATH       its subcommands, "name:description" a line
//	_jail_flags PATH      its flags, "spelling:description" a line
//	_jail_valued PATH     its flags that take a value, one line
//	_jail_kind FLAG       what a flag's value completes to
//	_jail_args PATH       what its arguments complete to
func shTables(root *node) (string, error) {
	var sub, subs, flags, valued, args strings.Builder
	root.walk(func(n *node) {
		for _, s := range n.subs {
			for _, name := range s.names {
				fmt.Fprintf(&sub, "\t%s) echo %s ;;\n", shQuote(n.path+"/"+name), shQuote(s.names[0]))
			}
		}
		if len(n.subs) > 0 {
			var lines []string
			for _, s := range n.subs {
				for _, name := range s.names {
					lines = append(lines, name+":"+s.usage)
				}
			}
			fmt.Fprintf(&subs, "\t%s) printf '%%s\\n' %s ;;\n", shQuote(n.path), shWords(lines))
		}
		var lines []string
		for _, f := range n.allFlags() {
			for _, sp := range f.spellings() {
				lines = append(lines, sp+":"+f.usage)
			}
		}
		fmt.Fprintf(&flags, "\t%s) printf '%%s\\n' %s ;;\n", shQuote(n.path), shWords(lines))
		if v := n.valued(); len(v) > 0 {
			fmt.Fprintf(&valued, "\t%s) printf '%%s\\n' %s ;;\n", shQuote(n.path), shWords(v))
		}
		if n.args != None {
			fmt.Fprintf(&args, "\t%s) echo %s ;;\n", shQuote(n.path), n.args)
		}
	})
	ks, err := kinds(root)
	if err != nil {
		return "", err
	}
	var kind strings.Builder
	for _, k := range ks {
		fmt.Fprintf(&kind, "\t%s) echo %s ;;\n", shQuote(k[0]), k[1])
	}
	fn := func(name, args, doc, body string) string {
		return fmt.Sprintf("# %s\n%s() {\n\tcase %s in\n%s\tesac\n}\n", doc, name, args, body)
	}
	return fn("_jail_sub", `"$1/$2"`, "_jail_sub PATH WORD: the subcommand WORD names at PATH, if any.", sub.String()) +
		fn("_jail_subs", `"$1"`, "_jail_subs PATH: the subcommands at PATH, name:description.", subs.String()) +
		fn("_jail_flags", `"$1"`, "_jail_flags PATH: the flags at PATH, spelling:description.", flags.String()) +
		fn("_jail_valued", `"$1"`, "_jail_valued PATH: the flags at PATH that take a value.", valued.String()) +
		fn("_jail_kind", `"$1"`, "_jail_kind FLAG: what FLAG's value completes to.", kind.String()) +
		fn("_jail_args", `"$1"`, "_jail_args PATH: what the arguments at PATH complete to.", args.String()), nil
}

// Bash is the bash completion.
func Bash(s Spec) (string, error) {
	return shCompletion(s, "# bash completion for jail.", bashDriver)
}

// Zsh is the zsh completion.
func Zsh(s Spec) (string, error) {
	return shCompletion(s, "#compdef jail\n# zsh completion for jail.", zshDriver)
}

// shCompletion is a completion for a shell that reads the tables
// shTables writes: head, the tables, then the shell's own driver.
func shCompletion(s Spec, head, driver string) (string, error) {
	root, err := tree(s)
	if err != nil {
		return "", err
	}
	tables, err := shTables(root)
	if err != nil {
		return "", err
	}
	return head + " Generated from jail's CLI definition by\n# internal/gendocs: do not edit.\n\n" + tables + driver, nil
}

// shQuote is s as one sh word.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shWords is each of words quoted, space-separated.
func shWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shQuote(w)
	}
	return strings.Join(q, " ")
}

// bashDriver walks COMP_WORDS: a subcommand's name moves into it, a flag
// that takes a value skips its value ("--flag=value" comes split at "=",
// as COMP_WORDBREAKS has it), "--" hands the rest to the command's own
// completion.
const bashDriver = `
# _jail_names ARGS...: the first word of each line jail ARGS prints.
_jail_names() {
	"$_jail_bin" "$@" 2>/dev/null | while IFS=$' \t' read -r name _; do printf '%s\n' "$name"; done
}

# _jail_values KIND CUR: the values of KIND that start with CUR.
_jail_values() {
	local IFS=$'\n'
	case $1 in
	file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$2")) ;;
	dir) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$2")) ;;
	profile) compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -W "$(_jail_names profiles)" -- "$2") $(compgen -f -X '!*.toml' -- "$2") $(compgen -d -- "$2")) ;;
	policy) COMPREPLY=($(compgen -W "$(_jail_names seccomp list)" -- "$2")) ;;
	session) COMPREPLY=($(compgen -W "$(_jail_names sessions list)" -- "$2")) ;;
	*) COMPREPLY=() ;;
	esac
}

_jail() {
	local _jail_bin=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} at= i w c skip=0 flag=
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if ((skip)); then
			skip=0
			[[ $w == = ]] && skip=1
			continue
		fi
		case $w in
		--)
			if declare -F _command_offset >/dev/null; then
				_command_offset $((i + 1))
			else
				local IFS=$'\n'
				COMPREPLY=($(compgen -c -- "$cur"))
			fi
			return ;;
		-*) _jail_valued "$at" | grep -qxF -- "$w" && skip=1 ;;
		*) c=$(_jail_sub "$at" "$w") && [[ -n $c ]] && at=${at:+$at }$c ;;
		esac
	done
	# The value of a flag: after it, or after its "=".
	if ((COMP_CWORD >= 2)) && [[ ${COMP_WORDS[COMP_CWORD-1]} == = ]]; then
		flag=${COMP_WORDS[COMP_CWORD-2]}
	elif [[ $cur == = ]]; then
		flag=${COMP_WORDS[COMP_CWORD-1]} cur=
	elif ((COMP_CWORD >= 1)); then
		flag=${COMP_WORDS[COMP_CWORD-1]}
	fi
	if [[ $flag == -* ]] && _jail_valued "$at" | grep -qxF -- "$flag"; then
		_jail_values "$(_jail_kind "$flag")" "$cur"
		return
	fi
	local IFS=$'\n'
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_jail_flags "$at" | cut -d: -f1)" -- "$cur"))
	elif [[ -n $(_jail_subs "$at") ]]; then
		COMPREPLY=($(compgen -W "$(_jail_subs "$at" | cut -d: -f1)" -- "$cur"))
	else
		case $(_jail_args "$at") in
		command) COMPREPLY=() ;;
		'') COMPREPLY=() ;;
		*) _jail_values "$(_jail_args "$at")" "$cur" ;;
		esac
	fi
}
complete -F _jail jail
`

// zshDriver is bashDriver's walk in zsh: "--flag=value" is one word there.
const zshDriver = `
# _jail_names ARGS...: the first word of each line jail ARGS prints.
_jail_names() {
	"$_jail_bin" "$@" 2>/dev/null | while IFS=$' \t' read -r name _; do print -r -- "$name"; done
}

# _jail_values KIND: complete values of KIND.
_jail_values() {
	case $1 in
	file) _files ;;
	dir) _files -/ ;;
	profile) local -a names expl; names=(${(f)"$(_jail_names profiles)"})
		_wanted profiles expl profile compadd -a names
		_files -g '*.toml' ;;
	policy) local -a names; names=(${(f)"$(_jail_names seccomp list)"}); compadd -a names ;;
	session) local -a names; names=(${(f)"$(_jail_names sessions list)"}); compadd -a names ;;
	*) _message 'value' ;;
	esac
}

_jail() {
	local _jail_bin=${words[1]} at= w c flag i skip=0
	local -a items
	for ((i = 2; i < CURRENT; i++)); do
		w=${words[i]}
		if ((skip)); then skip=0; continue; fi
		case $w in
		--)
			words=("${(@)words[i+1,-1]}")
			((CURRENT -= i))
			_normal
			return ;;
		--*=*) ;;
		-*) _jail_valued "$at" | grep -qxF -- "$w" && skip=1 ;;
		*) c=$(_jail_sub "$at" "$w") && [[ -n $c ]] && at=${at:+$at }$c ;;
		esac
	done
	if [[ $PREFIX == --*=* ]] && _jail_valued "$at" | grep -qxF -- "${PREFIX%%=*}"; then
		flag=${PREFIX%%=*}
		compset -P '*='
		_jail_values "$(_jail_kind "$flag")"
		return
	fi
	flag=${words[CURRENT-1]}
	if ((CURRENT > 2)) && [[ $flag == -* ]] && _jail_valued "$at" | grep -qxF -- "$flag"; then
		_jail_values "$(_jail_kind "$flag")"
		return
	fi
	if [[ $PREFIX == -* ]]; then
		items=(${(f)"$(_jail_flags "$at")"})
		_describe -t options 'option' items
	elif [[ -n $(_jail_subs "$at") ]]; then
		items=(${(f)"$(_jail_subs "$at")"})
		_describe -t commands 'command' items
	else
		case $(_jail_args "$at") in
		command|'') _message 'jail options, then -- and the command' ;;
		*) _jail_values "$(_jail_args "$at")" ;;
		esac
	fi
}

if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
	_jail "$@"
else
	compdef _jail jail
fi
`
