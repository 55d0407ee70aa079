package schedule

// Findings are the schedules random search found and shrank that the
// matrix keeps as rows RF1-RF4 (docs/CONTRACT.md, "Findings of random
// search"), written once for policy logjam on Linux, Python 3.12:
// suites/random plays each under every policy, and the real calibration on
// every interpreter (the policy, version and buffering put in).
var Findings = map[string]string{
	"RF1": `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"file"},"stderr":{"kind":"captured"},"threads":[{"calls":[{"backend":0,"lines":1,"size":80,"level":"I"}]}],"outside":8}}`,
	"RF2": `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"wurlitzer","capacity":4096,"chunk":1024},"stderr":{"kind":"oserror","k":1},"threads":[{"calls":[{"backend":0,"lines":64,"size":127,"level":"I"}]}]}}`,
	"RF3": `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"wurlitzer","capacity":8192,"chunk":1024},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":1,"size":130,"level":"E","cjk":true},{"backend":1,"lines":117,"size":80,"level":"E","cjk":true,"wait_for":4}]},{"calls":null},{"calls":[{"backend":1,"lines":1,"size":127,"level":"E","wait_for":1}]},{"calls":null}]}}`,
	"RF4": `{"kind":"sink","policy":"logjam","platform":"linux","python":"3.12","sink":{"fd2":{"kind":"wurlitzer","capacity":4096,"chunk":1024},"stderr":{"kind":"original"},"threads":[{"calls":[{"backend":0,"lines":0,"size":80,"level":"I"}]}],"outside":128,"daemons":1}}`,
}
