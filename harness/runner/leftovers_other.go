//go:build !linux

package runner

import "syscall"

// becomeSubreaper: no child subreaper outside Linux; the group kill is all.
func becomeSubreaper() {}

// killLeftovers: nothing to adopt outside Linux.
func killLeftovers() []string { return nil }

// dieWithParent: no Pdeathsig outside Linux; the group kill is all.
func dieWithParent(attr *syscall.SysProcAttr) *syscall.SysProcAttr { return attr }

// DieWithParentEnv: see leftovers_linux.go; outside Linux only the group
// kill applies.
const DieWithParentEnv = "LOGJAM_DIE_WITH_PARENT"

// DieWithParent does nothing outside Linux (no Pdeathsig).
func DieWithParent() {}
