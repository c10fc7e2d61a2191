//go:build (darwin || freebsd || linux || netbsd) && !android

package cuda

import "github.com/ebitengine/purego"

// dlopen, dlsym, dlclose and bind are the dynamic loader through purego
// (no cgo), on the platforms it supports.
func dlopen(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

func dlsym(lib uintptr, name string) (uintptr, error) { return purego.Dlsym(lib, name) }

func dlclose(lib uintptr) { purego.Dlclose(lib) }

func bind(fn any, sym uintptr) { purego.RegisterFunc(fn, sym) }
