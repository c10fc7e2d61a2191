package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/tidemark/tidemark/cuda"
	"github.com/tidemark/tidemark/kernels"
)

// gpuInfo is what gpu-info reports: the cuda package's probe and, when the
// CPU backend runs, its name.
type gpuInfo struct {
	cuda.Info
	CPU string `json:"cpu,omitempty"`
}

func runGPUInfo(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gpu-info", stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	lib := fs.String("library", "", "the CUDA driver library (default $TIDEMARK_LIBCUDA, else "+cuda.DefaultLibrary+")")
	if err := parse(fs, args); err != nil {
		return err
	}
	v := gpuInfo{Info: cuda.Probe(&cuda.Options{Library: *lib})}
	if v.Backend != "cuda" {
		v.CPU = kernels.DefaultCPU().Name()
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(v)
	}
	if v.Backend != "cuda" {
		_, err := fmt.Fprintf(stdout, "backend: cpu (%s)\nreason: %s\n", v.CPU, v.Reason)
		return err
	}
	_, err := fmt.Fprintf(stdout, "backend: cuda\ndevice: %s\nmemory: %.1f GiB\ncompute capability: %s\nmultiprocessors: %d\ndriver: %d.%d (%s)\n",
		v.Device, float64(v.MemoryBytes)/(1<<30), v.ComputeCapability, v.Multiprocessors, v.DriverVersion/1000, v.DriverVersion%1000/10, v.Library)
	return err
}
