//go:build !((darwin || freebsd || linux || netbsd) && !android)

package cuda

import (
	"errors"
	"runtime"
)

// Without purego's loader on this platform no driver loads: Open returns
// ErrNoDriver and the CPU backend runs.
func dlopen(string) (uintptr, error) {
	return 0, errors.New("no dynamic loader on " + runtime.GOOS + "/" + runtime.GOARCH)
}

func dlsym(uintptr, string) (uintptr, error) { return 0, errors.New("no dynamic loader") }

func dlclose(uintptr) {}

func bind(any, uintptr) {}
