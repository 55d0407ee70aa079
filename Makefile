# The chaos suite that proves a runtime's logging never jams it.
# Only Go is needed: the Ginkgo CLI is pinned in go.mod (go tool ginkgo).
GINKGO := go tool ginkgo
FOCUS ?=
N ?= 20

ZOO_STREAMS ?= 10
ZOO_CAP ?= 2000
.PHONY: help list doctor zoo test chaos chaos-nightly nightly-local focus report bench bench-matrix bench-calibrate fuzz lint mutants stress stress-daemon calibrate calibrate-stress

help:            ## this list (the default target)
	@grep -E '^[a-z-]+: +##' $(MAKEFILE_LIST) | sed -E 's/: +## /\t/' | awk -F'\t' '{printf "  make %-17s %s\n", $$1, $$2}'

list:            ## every cell's name (what FOCUS matches), without running any
	./logjam list

doctor:          ## which of g++, pybind11-dev, Chromium and which Python interpreters are here
	./logjam doctor

test:            ## every unit test and every suite (go test ./..., saying what it does while the go command is silent)
	./logjam test

chaos:           ## every suite with the local profile; prints the matrix, writes reports/runs/<run>/ (reports/latest)
	./logjam chaos

chaos-nightly:   ## strict mode, repeats, scaled deadlines (ginkgo.yml: nightly)
	./logjam chaos -profile nightly

nightly-local:   ## the nightly workflow's steps here: 4 shards one after another, merged, checked against one run
	LOGJAM_PROFILE=local scripts/nightly.sh local 4

focus:           ## rerun the cells matching FOCUS, e.g. make focus FOCUS='D1 .*pystderr'
	./logjam chaos -profile focus -focus '$(FOCUS)'

report:          ## re-render the matrix, JUnit, HTML and markdown from reports/latest/matrix.json
	./logjam report

BENCH_PY ?=
bench:           ## benchmarks (figures for notes; never asserted by tests), then the header's cost per line (BENCH_PY=3.12: one interpreter)
	go test -run '^$$' -bench . -benchtime 1s ./sim/... ./harness/watchdog/ ./pipes/
	go run ./cmd/calbench $(if $(BENCH_PY),-py $(BENCH_PY)) -n 20000 -reps 9

bench-matrix:    ## the local matrix warm and in a fresh clone, -random 200 and throughput, side by side with issue 36's base (RUNS=5 alternating runs, FRESH=2; README=1 rewrites its figures)
	scripts/bench-matrix.sh -n $(or $(RUNS),5) -fresh $(or $(FRESH),2) $(if $(README),-readme)

fuzz:            ## each fuzz target for a bounded time
	go test -run '^$$' -fuzz FuzzDecodeEscaped -fuzztime 60s ./internal/pytext/
	go test -run '^$$' -fuzz FuzzKeepCap -fuzztime 60s ./sim/keep/
	go test -run '^$$' -fuzz FuzzReadBundle -fuzztime 60s ./harness/report/

lint:            ## gofmt, go vet, the race detector, and the darwin build
	test -z "$$(gofmt -l .)" || { gofmt -l .; exit 1; }
	go vet ./...
	GOOS=darwin go build ./...
	go test -race ./...

zoo:             ## plant each random/zoo bug in a scratch copy: random runs of logjam to its first failure per stream, and the matrix's verdict
	go run ./cmd/zoo -streams $(ZOO_STREAMS) -cap $(ZOO_CAP) -matrix

mutants:         ## the semantic mutation kit (cmd/mutants/mutants.yml): score and survivors
	go run ./cmd/mutants

stress:          ## every cell N times (default 20) with every core loaded; a table of the cells whose verdict ever differed
	go run ./cmd/stress -n $(N)

DAEMON_N ?= 200
stress-daemon:   ## the daemon family with its window widened (a failpoint) DAEMON_N times; a table of every verdict that differed
	./scripts/stress-daemon.sh $(DAEMON_N)

calibrate:       ## the real column: every row on every CPython found (python3, python3.X, pyenv), both bufferings of sys.stderr, cells side by side (LOGJAM_CALIBRATE_J, default four a core); reports/calibration.{json,txt}
	$(GINKGO) --timeout 1h --label-filter calibrate ./calibrate

bench-calibrate: ## the real column's figures (make calibrate, CI's step) side by side with the commit before its cells ran side by side (RUNS=1)
	scripts/bench-calibrate.sh -n $(or $(RUNS),1)

PY ?= default
calibrate-stress: ## each timing-sensitive real cell N times (default 20) on PY (default python3); prints the agreement rate
	LOGJAM_CALIBRATE_PY=$(PY) LOGJAM_CALIBRATE_REPEAT=$(N) LOGJAM_CALIBRATE_ROWS=D1,D2,P5,I1,I2,I6,I7,F4,T1 LOGJAM_CALIBRATE_REPORT=$(CURDIR)/reports/calibration-stress.json \
		$(GINKGO) --label-filter calibrate ./calibrate
