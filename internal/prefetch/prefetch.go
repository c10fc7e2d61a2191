// Package prefetch asks the CPU to start loading memory that is about to be
// read, so that graph searches overlap their cache misses (hnswlib does the
// same with _mm_prefetch). It is a hint: it never faults, changes no memory
// and may be ignored by the hardware.
package prefetch
