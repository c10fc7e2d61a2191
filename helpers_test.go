package tidemark

import (
	"context"
	"testing"
)

// openTest opens a database in dir or fails the test.
func openTest(t testing.TB, dir string, opts *Options) *DB {
	t.Helper()
	db, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// unit is a dim-dimensional vector near axis hot.
func unit(dim, hot int) []float32 {
	v := make([]float32, dim)
	v[hot%dim] = 1
	v[(hot+1)%dim] = 0.1
	return v
}

// createTest creates a collection or fails the test.
func createTest(t testing.TB, db *DB, name string, o *CollectionOptions) *Collection {
	t.Helper()
	c, err := db.CreateCollection(context.Background(), name, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
