//go:build !linux || race

package offheap

import "errors"

// reserve is not supported here (another system, or the race detector):
// Arrays live on the Go heap.
func reserve(size int) (region, error) {
	return region{}, errors.New("offheap: no address-space reservation on this system")
}

func (r *region) commit(want int) error { return errors.New("offheap: unsupported") }

func unreserve(r *region) {}

func (r *region) populate(upto int) {}
