package main

import (
	"flag"
	"fmt"
	"os"

	"logjam/scenario/schedule"
)

// applySchedule validates scenario R's -schedule and takes the policy,
// platform, Python and buffering from it; a flag may repeat a value, not change it.
// GO_FAILPOINTS must be the schedule's: a replay without its faults would
// play another run. Other scenarios take no -schedule.
func applySchedule(fs *flag.FlagSet, id, raw string, policy, platform, python, buffering *string) error {
	if id != "R" {
		if raw != "" {
			return fmt.Errorf("scenario %s takes no -schedule", id)
		}
		return nil
	}
	if raw == "" {
		return fmt.Errorf("scenario R needs -schedule (logjam chaos -random prints one for each failure)")
	}
	s, err := schedule.Decode(raw)
	if err != nil {
		return err
	}
	pol, plat, py, buf := s.Runtime()
	want := map[string]string{"policy": pol, "platform": plat, "python": py, "buffering": buf, "stderr": buf}
	var clash error
	fs.Visit(func(f *flag.Flag) {
		if w, ok := want[f.Name]; ok && f.Value.String() != w && clash == nil {
			clash = fmt.Errorf("the schedule says -%s %s, not %s", f.Name, w, f.Value.String())
		}
	})
	if clash != nil {
		return clash
	}
	if got, want := os.Getenv("GO_FAILPOINTS"), s.Failpoints().Env(); got != want {
		return fmt.Errorf("this schedule runs with GO_FAILPOINTS=%q (set exactly that), not %q", want, got)
	}
	*policy, *platform, *python, *buffering = pol, plat, py, buf
	return nil
}
