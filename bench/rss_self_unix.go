//go:build unix && !linux

package bench

import (
	"runtime"
	"syscall"
)

// peakRSS is this process's peak resident set in bytes since it started
// (getrusage; 0 when unknown).
func peakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return ru.Maxrss // bytes there
	}
	return ru.Maxrss * 1024
}

// resetPeakRSS cannot reset the peak here.
func resetPeakRSS() bool { return false }
