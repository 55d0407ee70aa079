// This file is logjam's, not PingCAP's: it stands in for the upstream
// http.go (README.md says why and how the copy is checked).

package failpoint

import "errors"

// serve is what failpoints.go's init calls when GO_FAILPOINTS_HTTP is set.
// Upstream it starts an HTTP control server; here it refuses, so that
// nothing built on this copy links net/http. logjam's envguard refuses
// GO_FAILPOINTS_HTTP before this init runs (failpoints/envguard).
func serve(host string) error {
	return errors.New("failpoint: GO_FAILPOINTS_HTTP=" + host + ": this build of failpoint has no HTTP control server")
}
