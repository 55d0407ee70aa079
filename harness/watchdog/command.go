package watchdog

import (
	"os/exec"
	"slices"
	"strings"
)

// renderCommand renders cmd as one shell line that reruns it from the
// environment base (normally os.Environ()): the working directory, the
// variables cmd.Env adds, changes or removes relative to base, then the
// program and its arguments, each quoted for a POSIX shell. The watchdog's
// own plumbing (fd 3, the process group) is not part of it: a child must run
// without fd 3.
func renderCommand(cmd *exec.Cmd, base []string) string {
	var parts []string
	if cmd.Dir != "" {
		parts = append(parts, "cd", shellQuote(cmd.Dir), "&&")
	}
	if cmd.Env != nil {
		want, order := envMap(cmd.Env)
		have, _ := envMap(base)
		var unset []string
		for name := range have {
			if _, ok := want[name]; !ok {
				unset = append(unset, name)
			}
		}
		slices.Sort(unset)
		var changed []string
		useEnv := len(unset) > 0 // only env(1) can remove a variable
		for _, name := range order {
			if v, ok := have[name]; ok && v == want[name] {
				continue
			}
			changed = append(changed, name)
			useEnv = useEnv || !isShellName(name)
		}
		if useEnv {
			// env(1) reads NAME=VALUE itself, so the whole word may be quoted.
			parts = append(parts, "env")
			for _, name := range unset {
				parts = append(parts, "-u", shellQuote(name))
			}
			for _, name := range changed {
				parts = append(parts, shellQuote(name+"="+want[name]))
			}
		} else {
			// The shell treats NAME=... as an assignment only if NAME is bare.
			for _, name := range changed {
				parts = append(parts, name+"="+shellQuote(want[name]))
			}
		}
	}
	program := cmd.Path
	if program == "" && len(cmd.Args) > 0 {
		program = cmd.Args[0]
	}
	parts = append(parts, shellQuote(program))
	if len(cmd.Args) > 1 {
		for _, arg := range cmd.Args[1:] {
			parts = append(parts, shellQuote(arg))
		}
	}
	return strings.Join(parts, " ")
}

// envMap reads KEY=VALUE entries; as in os/exec, the last duplicate wins.
// order lists the names in first-seen order.
func envMap(env []string) (values map[string]string, order []string) {
	values = make(map[string]string, len(env))
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if _, seen := values[name]; !seen {
			order = append(order, name)
		}
		values[name] = value
	}
	return values, order
}

// shellQuote returns s unchanged when a POSIX shell would read it as one
// plain word, otherwise single-quoted.
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	plain := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("@%+=:,./_-", r)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isShellName reports whether a shell accepts name in a NAME=value prefix.
func isShellName(name string) bool {
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return name != ""
}
