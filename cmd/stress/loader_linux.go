package main

import "syscall"

// loaderAttr: a loader dies with stress, even if stress is killed outright.
func loaderAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
