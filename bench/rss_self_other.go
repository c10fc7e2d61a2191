//go:build !unix

package bench

// peakRSS is 0 where the process's peak resident set is not reported.
func peakRSS() int64 { return 0 }

// resetPeakRSS cannot reset the peak here.
func resetPeakRSS() bool { return false }
