package bench

import (
	"bytes"
	"os"
	"strconv"
)

// peakRSS is this process's peak resident set in bytes since it started
// or since the last resetPeakRSS (VmHWM of /proc/self/status; 0 when
// unknown).
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(l, []byte("VmHWM:")); ok {
			f := bytes.Fields(v) // "123456 kB"
			if len(f) == 2 && string(f[1]) == "kB" {
				if kb, err := strconv.ParseInt(string(f[0]), 10, 64); err == nil {
					return kb * 1024
				}
			}
		}
	}
	return 0
}

// resetPeakRSS sets the peak resident set to the current one (writing 5 to
// /proc/self/clear_refs, Linux 4.0 and later) and reports whether it could.
func resetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}
