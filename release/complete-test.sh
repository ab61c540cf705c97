#!/usr/bin/env bash
# release/complete-test.sh ROOT: the bash, zsh and fish completions under
# ROOT (an unpacked .deb) completing real command lines, with ROOT's jail
# answering the profile and policy names; each shell as a user would have
# it (zsh through compinit in a pseudo-terminal, fish's complete -C). Part
# of make test-release (release/test.sh). Exits non-zero on the first
# completion that misses what it must offer.
set -euo pipefail
root=$(cd "$1" && pwd)
export PATH=$root/usr/bin:$PATH
bash_file=$root/usr/share/bash-completion/completions/jail
zsh_dir=$root/usr/share/zsh/vendor-completions
fish_file=$root/usr/share/fish/vendor_completions.d/jail.fish
fails=0

# The cases: a line typed so far (ending where TAB is pressed), and a
# candidate it must offer ("!x": one it must not).
cases=(
	'jail prof|profiles'
	'jail prof|profile'
	'jail profile s|show'
	'jail -p |agent'
	'jail --profile |minimal'
	'jail profile show |agent'
	'jail seccomp show |strict'
	'jail seccomp export default --f|--format'
	'jail --wor|--workspace'
	'jail --workspace /us|usr'
	'jail profile show --wor|--workspace'
	'jail profile show --stat|!--status-json'
	'jail run --stat|--status-json'
	'jail -p agent -- tru|true'
)

# check SHELL LINE WANT GOT: one case's verdict. A path is compared
# without its leading and trailing slash: the shells add them differently.
check() {
	local shell=$1 line=$2 want=$3 got
	got=$(sed 's#^/##; s#/$##' <<<"$4")
	if [[ $want == !* ]]; then
		grep -qxF -- "${want#!}" <<<"$got" || return 0
	else
		grep -qxF -- "$want" <<<"$got" && return 0
	fi
	echo "FAIL $shell: '$line<TAB>' must offer $want; offers: $(tr '\n' ' ' <<<"$got")"
	fails=$((fails + 1))
}

# bash: COMP_WORDS as readline splits them (at spaces and at "=").
bash_complete() {
	bash --norc --noprofile -c '
		. "$1"; shift
		line=$1
		read -ra COMP_WORDS <<<"$line"
		[[ $line == *" " ]] && COMP_WORDS+=("")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) COMP_LINE=$line COMP_POINT=${#line}
		_jail
		printf "%s\n" "${COMPREPLY[@]}"' bash "$bash_file" "$1"
}

# zsh: an interactive zsh in a pseudo-terminal, with compinit and the
# completion's directory on fpath; compadd records what it is given.
zsh_complete() {
	local out
	out=$(mktemp)
	# shellcheck disable=SC2016
	ZDOTDIR=/nonexistent zsh -f -c '
		zmodload zsh/zpty
		zpty z zsh -f -i
		zpty -w z "PS1=; fpath=($1 \$fpath); autoload -Uz compinit; compinit -u -D"
		zpty -w z "compadd() { local -a m; if [[ \${@[(I)-[OAD]]} -eq 0 ]]; then builtin compadd -O m \"\$@\"; print -rl -- \$m >>$2; fi; builtin compadd \"\$@\"; }"
		zpty -w z "print -r -- started >$2"
		zpty -n -w z "$3"$'"'"'\t'"'"'
		for i in {1..50}; do sleep 0.1; [[ $(wc -l <$2) -gt 1 ]] && break; done
		sleep 0.3
		zpty -d z' zsh "$zsh_dir" "$out" "$1"
	tail -n +2 "$out"
	rm -f "$out"
}

# fish: complete -C, the line as typed.
fish_complete() {
	fish --no-config -c "source $fish_file; complete -C '$1'" | cut -f1
}

for c in "${cases[@]}"; do
	line=${c%|*} want=${c##*|}
	check bash "$line" "$want" "$(bash_complete "$line")"
	check zsh "$line" "$want" "$(zsh_complete "$line")"
	check fish "$line" "$want" "$(fish_complete "$line")"
done
# bash splits --flag=value at "=": the value completes after it.
check bash 'jail --profile=' agent "$(bash -c '. "$1"; COMP_WORDS=(jail --profile = ""); COMP_CWORD=3; _jail; printf "%s\n" "${COMPREPLY[@]}"' bash "$bash_file")"
check zsh 'jail --profile=' '--profile=agent' "$(zsh_complete 'jail --profile=' | sed 's/^/--profile=/')"
check fish 'jail --profile=' '--profile=agent' "$(fish_complete 'jail --profile=')"

if [ "$fails" -gt 0 ]; then
	echo "$fails completion(s) missed"
	exit 1
fi
echo "completions: ${#cases[@]} lines and --flag=value, each in bash, zsh and fish"
