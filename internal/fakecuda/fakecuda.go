// Package fakecuda builds the test double of the CUDA driver: a
// libcuda.so.1 (cuda/emu/fakecuda.cpp) whose device is host memory and
// whose kernels are tidemark's own CUDA source (cuda/kernels/tidemark.cu)
// compiled for the host under a SIMT emulation (cuda/emu/simt.h), every
// thread of a block a real thread. Tests in package cuda and its users
// load it with cuda.Options.Library.
package fakecuda

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// ErrNoCompiler means g++ is not installed. Tests skip on it unless the
// environment variable TIDEMARK_CUDA_CHECKS is set (CI sets it), when the
// emulated backend must be tested.
var ErrNoCompiler = errors.New("fakecuda: g++ not found")

// Required reports whether the environment demands the emulated checks
// (TIDEMARK_CUDA_CHECKS set): then a missing compiler is a failure, not a
// skip.
func Required() bool { return os.Getenv("TIDEMARK_CUDA_CHECKS") != "" }

// Root is the module's root directory, found from this file.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Build compiles the fake driver with the kernels of source (a .cu file;
// "" for cuda/kernels/tidemark.cu) into dir and returns the library's
// path.
func Build(dir, source string) (string, error) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		return "", ErrNoCompiler
	}
	root := Root()
	if source == "" {
		source = filepath.Join(root, "cuda", "kernels", "tidemark.cu")
	}
	lib := filepath.Join(dir, "libcuda.so.1")
	cmd := exec.Command(gxx, "-std=c++20", "-O1", "-g", "-shared", "-fPIC", "-pthread",
		"-I", filepath.Join(root, "cuda", "kernels"), "-I", filepath.Join(root, "cuda", "emu"),
		fmt.Sprintf("-DTM_KERNELS_SOURCE=%q", source),
		"-o", lib, filepath.Join(root, "cuda", "emu", "fakecuda.cpp"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("fakecuda: %s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return lib, nil
}
