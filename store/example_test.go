package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log"
	"os"
	"strings"

	"github.com/tidemark/tidemark/store"
)

// Open a log, append, take a snapshot, checkpoint, and recover the way an
// engine does on start: load the snapshot, replay what follows it.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "tidemark-wal-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	w, err := store.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	state := []string{}
	for _, m := range []string{"alpha", "beta", "gamma"} {
		if _, err := w.Append(ctx, []byte(m)); err != nil {
			log.Fatal(err)
		}
		state = append(state, m)
	}
	// Snapshot the state as of the last record, then let the log go.
	snapSeq := w.LastSeq()
	err = store.WriteSnapshot(dir, "state", snapSeq, func(out io.Writer) error {
		_, err := io.WriteString(out, strings.Join(state, ","))
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Checkpoint(snapSeq); err != nil {
		log.Fatal(err)
	}
	if _, _, err := w.AppendBatch(ctx, [][]byte{[]byte("delta"), []byte("epsilon")}); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	// Restart.
	w, err = store.Open(dir, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	seq, body, err := store.ReadSnapshot(dir, "state")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("snapshot at %d: %s\n", seq, body)
	err = w.Replay(seq+1, func(seq uint64, payload []byte) error {
		fmt.Printf("replay %d: %s\n", seq, payload)
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("last:", w.LastSeq(), "cut:", w.Recovery().TruncatedBytes)
	// Output:
	// snapshot at 3: alpha,beta,gamma
	// replay 4: delta
	// replay 5: epsilon
	// last: 5 cut: 0
}

// A snapshot that a later one will likely replace before anything reads
// it (an engine's periodic checkpoint) is written past the page cache;
// it reads back the same.
func ExampleWriteSnapshotDirect() {
	dir, err := os.MkdirTemp("", "tidemark-snap-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	body := strings.Repeat("state ", 2<<20) // 12 MiB: whole blocks go direct
	err = store.WriteSnapshotDirect(dir, "state", 42, func(out io.Writer) error {
		_, err := io.WriteString(out, body)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	seq, got, err := store.ReadSnapshot(dir, "state")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(seq, len(got), string(got) == body)
	// Output: 42 12582912 true
}

// MapSnapshot reads a snapshot without copying it: the body is the page
// cache's own memory. Nothing read from it stands before its checksum
// does: here, computed while the body is read (from Seed) and checked
// with CheckSum; Check would read the body a second time.
func ExampleMapSnapshot() {
	dir, err := os.MkdirTemp("", "tidemark-snap-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	err = store.WriteSnapshot(dir, "state", 7, func(out io.Writer) error {
		_, err := io.WriteString(out, "alpha beta gamma")
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	m, err := store.MapSnapshot(dir, "state")
	if errors.Is(err, errors.ErrUnsupported) {
		fmt.Println(7, 3, "words, checked") // read it with OpenSnapshot instead
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	words := len(bytes.Fields(m.Body))
	crc := crc32.Update(m.Seed(), crc32.MakeTable(crc32.Castagnoli), m.Body)
	if err := m.CheckSum(crc); err != nil {
		log.Fatal(err)
	}
	fmt.Println(m.Seq, words, "words, checked")
	// Output: 7 3 words, checked
}
