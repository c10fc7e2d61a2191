// Package bench holds tidemark's benchmark workloads as libraries: each is
// a Config with documented defaults and a Run function returning a report
// that prints as a table or JSON. The CLI (tidemark bench …) only binds
// flags to a Config.
//
// Timings on shared machines are noisy, so every report gives min and
// median over repeats and states each speed as a ratio to a baseline
// measured in the same run.
package bench
