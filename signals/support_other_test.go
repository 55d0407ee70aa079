//go:build !linux

package signals

const dieBySupported = false
