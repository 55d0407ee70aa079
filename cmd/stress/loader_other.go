//go:build !linux

package main

import "syscall"

// loaderAttr: no parent-death signal outside Linux; stress kills its loaders.
func loaderAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
