//go:build !linux

package runner

import "syscall"

// becomeSubreaper: no child subreaper outside Linux; the group kill is all.
func becomeSubreaper() {}

// killLeftovers: nothing to adopt outside Linux.
func killLeftovers() []string { return nil }

// dieWithParent: no Pdeathsig outside Linux; the group kill is all.
func dieWithParent(attr *syscall.SysProcAttr) *syscall.SysProcAttr { return attr }
