package gendocs

// The fish completion: one `complete` line per subcommand and flag, each
// conditioned on the command the words typed so far are in (__jail_path,
// the same walk as bash's and zsh's); after "--", the command's own.

import (
	"fmt"
	"strings"
)

// Fish is the fish completion.
func Fish(s Spec) (string, error) {
	root, err := tree(s)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# fish completion for jail. Generated from jail's CLI definition by\n# internal/gendocs: do not edit.\n")
	b.WriteString(fishDriver)

	b.WriteString("\n# __jail_sub PATH WORD: the subcommand WORD names at PATH, if any.\nfunction __jail_sub\n    switch \"$argv[1]/$argv[2]\"\n")
	root.walk(func(n *node) {
		for _, sub := range n.subs {
			var pats []string
			for _, name := range sub.names {
				pats = append(pats, fishQuote(n.path+"/"+name))
			}
			fmt.Fprintf(&b, "        case %s\n            echo %s\n", strings.Join(pats, " "), fishQuote(sub.names[0]))
		}
	})
	b.WriteString("    end\nend\n")

	b.WriteString("\n# __jail_valued PATH: the flags at PATH that take a value.\nfunction __jail_valued\n    switch \"$argv[1]\"\n")
	root.walk(func(n *node) {
		if v := n.valued(); len(v) > 0 {
			fmt.Fprintf(&b, "        case %s\n        printf '%%s\\n' %s\n", fishQuote(n.path), fishWords(v))
		}
	})
	b.WriteString("    end\nend\n\ncomplete -c jail -f\n")

	root.walk(func(n *node) {
		cond := fishQuote("__jail_in " + fishQuote(n.path))
		fmt.Fprintf(&b, "\n# jail %s\n", n.path)
		for _, sub := range n.subs {
			fmt.Fprintf(&b, "complete -c jail -n %s -a %s -d %s\n", cond, fishQuote(sub.names[0]), fishQuote(sub.usage))
		}
		for _, f := range n.allFlags() {
			line := "complete -c jail -n " + cond
			for _, name := range f.names {
				if len(name) == 1 {
					line += " -s " + name
				} else {
					line += " -l " + fishQuote(name)
				}
			}
			if f.placeholder != "" {
				line += " -r" + fishValues(f.kind)
			}
			b.WriteString(line + " -d " + fishQuote(f.usage) + "\n")
		}
		if n.args != None && n.args != Command {
			fmt.Fprintf(&b, "complete -c jail -n %s%s\n", cond, fishValues(n.args))
		}
	})
	b.WriteString("\n# after --: the command and its own completions\ncomplete -c jail -n '__jail_in --' -x -a '(__jail_command)'\n")
	return b.String(), nil
}

// fishValues are the complete options that offer values of a kind.
func fishValues(k Kind) string {
	switch k {
	case File:
		return " -F"
	case Dir:
		return " -x -a '(__fish_complete_directories)'"
	case Profile:
		return " -F -a '(__jail_names profiles)'"
	case Policy:
		return " -x -a '(__jail_names seccomp list)'"
	case Session:
		return " -x -a '(__jail_names sessions list)'"
	}
	return " -x"
}

// fishQuote is s as one fish word.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func fishWords(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = fishQuote(w)
	}
	return strings.Join(q, " ")
}

// fishDriver walks the words typed so far as bash's driver does.
const fishDriver = `
# __jail_path: the command the words typed so far are in ("" for jail
# itself, "profile show"), or "--" once the command to run has begun.
function __jail_path
    set -l words (commandline -opc)
    set -e words[1]
    set -l path ''
    set -l skip 0
    for w in $words
        if test $skip = 1
            set skip 0
            continue
        end
        switch $w
            case --
                echo -- --
                return
            case '--*=*'
            case '-*'
                if contains -- $w (__jail_valued $path)
                    set skip 1
                end
            case '*'
                set -l c (__jail_sub $path $w)
                if test -n "$c"
                    set path (string trim -- "$path $c")
                end
        end
    end
    echo -- $path
end

# __jail_in PATH: whether the words typed so far are in the command PATH.
function __jail_in
    test (__jail_path) = "$argv[1]"
end

# __jail_names ARGS...: the first word of each line jail ARGS prints.
function __jail_names
    set -l jail (commandline -opc)[1]
    command $jail $argv 2>/dev/null | string replace -r '\s.*' ''
end

# __jail_command: completions for the command after --.
function __jail_command
    set -l words (commandline -opc)
    set -l i (contains -i -- -- $words)
    set -l line (commandline -ct)
    if test $i -lt (count $words)
        set line $words[(math $i + 1)..-1] $line
    end
    complete -C (string join -- ' ' $line)
end
`
