//go:build !unix

package bench

import "os"

// maxRSS is 0 where the child's peak resident set is not reported.
func maxRSS(*os.ProcessState) int64 { return 0 }
