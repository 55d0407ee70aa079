package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"

	"logjam/calibrate"
)

// doctor says what this machine has of what the suite can use, and what
// each missing piece costs; it changes nothing and exits 0 (2 on an
// argument). Only Go is required: everything below serves the real column
// (calibrate) or the report's browser check.
func doctor(args []string, w io.Writer) int {
	if len(args) > 0 {
		if isHelp(args[0]) {
			fmt.Fprintf(w, "%s\n  which optional tools (g++, pybind11, chromium) and interpreters the suite can use here; no flags\n", doctorUsage)
			return 0
		}
		fmt.Fprintf(os.Stderr, "logjam doctor: unexpected argument %q (%s)\n", args[0], doctorUsage)
		return 2
	}
	mark := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "no "
	}
	fmt.Fprintf(w, "go         yes %s %s/%s (all the suite needs)\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	cxx, err := calibrate.Compiler()
	fmt.Fprintf(w, "g++        %s %s\n", mark(err == nil), orWhy(cxx, "no C++ compiler ($CXX or g++): make calibrate cannot build the extension"))
	inc := calibrate.Pybind11Include()
	fmt.Fprintf(w, "pybind11   %s %s\n", mark(inc != ""), orWhy(inc, "no pybind11/iostream.h (apt-get install pybind11-dev): the pystderr column plays a copy of pythonbuf"))
	browser := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			browser = p
			break
		}
	}
	fmt.Fprintf(w, "chromium   %s %s\n", mark(browser != ""), orWhy(browser, "no Chromium: the test that loads matrix.html in a browser is skipped"))
	ins := calibrate.Discover()
	fmt.Fprintf(w, "python     %s %d interpreter(s) for the real column (python3.10-3.13 on PATH, /usr/bin, /usr/local/bin, ~/.pyenv)\n", mark(len(ins) > 0), len(ins))
	for _, in := range ins {
		dev := "headers found (python3-dev)"
		if in.Missing != "" {
			dev = in.Missing
		}
		fmt.Fprintf(w, "  %-8s %s: %s\n", in.Version, in.Path, dev)
	}
	return 0
}

func orWhy(found, why string) string {
	if found != "" {
		return found
	}
	return why
}
