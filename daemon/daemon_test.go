package daemon

import (
	"syscall"
	"testing"
)

func TestRules(t *testing.T) {
	v := func(major, minor, micro uint32) uint32 { return major<<24 | minor<<16 | micro<<8 | 0xF0 }
	for _, c := range []struct {
		platform string
		py       uint32
		want     Fate
	}{
		{"linux", v(3, 12, 0), Unwind},
		{"linux", v(3, 13, 7), Unwind},
		{"linux", v(3, 13, 8), Hang},
		{"linux", v(3, 14, 0), Hang},
		{"macos", v(3, 12, 0), ExitWithoutUnwind},
		{"macos", v(3, 13, 7), ExitWithoutUnwind},
		{"macos", v(3, 13, 8), Hang},
		{"macos", v(3, 14, 0), Hang},
	} {
		p := For(c.platform, c.py)
		if p.Fate != c.want {
			t.Errorf("For(%s, %s) = %s, want %s", c.platform, p.Python, p.Fate, c.want)
		}
	}
	if Py3138 != v(3, 13, 8) {
		t.Errorf("Py3138 = %#x", Py3138)
	}
}

func TestUnwindStopsAtTheInnermostFatalFrame(t *testing.T) {
	pythonbuf := []Frame{CleanupFrame("ostream::flush rethrows __forced_unwind"), ReleasesPyObjectsFrame("pythonbuf::_sync"), CatchAllFrame("log callback")}
	end, at, ok := UnwindThrough(pythonbuf)
	if !ok || end.Signal != syscall.SIGSEGV || at.Name != "pythonbuf::_sync" {
		t.Errorf("pythonbuf path: %v %v %v", end, at, ok)
	}
	flush := []Frame{CatchAllFrame("try/catch (...)"), NoexceptFrame("~RuntimeErrorScope")}
	end, at, ok = UnwindThrough(flush)
	if !ok || end.Signal != syscall.SIGABRT || end.Message != "FATAL: exception not rethrown\n" || at.Kind != CatchAll {
		t.Errorf("flush path: %v %v %v", end, at, ok)
	}
	end, _, ok = UnwindThrough([]Frame{NoexceptFrame("~RuntimeErrorScope")})
	if !ok || end.Signal != syscall.SIGABRT || end.Message != "" {
		t.Errorf("noexcept: %v %v", end, ok)
	}
	if _, _, ok := UnwindThrough([]Frame{CleanupFrame("lock_guard")}); ok {
		t.Error("a cleanup frame ended the unwind")
	}
}

func TestUnwindsIsLinuxBefore3138(t *testing.T) {
	for _, c := range []struct {
		platform, version string
		want              bool
	}{{"linux", "3.12.0", true}, {"linux", "3.13.7", true}, {"linux", "3.13.8", false}, {"linux", "3.14", false}, {"macos", "3.12.0", false}} {
		if got := Unwinds(c.platform, VersionHex(c.version)); got != c.want {
			t.Errorf("Unwinds(%s, %s) = %v", c.platform, c.version, got)
		}
	}
}
