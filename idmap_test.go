package tidemark

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// idMap answers as a map[string]int would through inserts, versions of an
// id moving it to a later row, aliases, deletions (each closing its hole
// by moving later slots back) and growth.
func TestIDMapMatchesMap(t *testing.T) {
	var rows rowTable
	var m idMap
	ref := map[string]int{}
	rng := rand.New(rand.NewPCG(1, 2))
	ids := make([]string, 3000)
	for i := range ids {
		ids[i] = fmt.Sprintf("id-%d", i)
	}
	check := func(step int) {
		t.Helper()
		for _, id := range ids {
			j, ok := m.get(id, &rows)
			rj, rok := ref[id]
			if ok != rok || j != rj {
				t.Fatalf("step %d: get(%q) = %d, %v; want %d, %v", step, id, j, ok, rj, rok)
			}
		}
		if m.len() != len(ref) {
			t.Fatalf("step %d: len %d, want %d", step, m.len(), len(ref))
		}
	}
	for step := range 20000 {
		id := ids[rng.IntN(len(ids))]
		switch op := rng.IntN(10); {
		case op < 6: // a new row (a first write, or a new version) under id
			rows.add(row{mem: stored{ID: id}})
			m.set(id, rows.len()-1, &rows)
			ref[id] = rows.len() - 1
		case op < 8 && rows.len() > 0: // id folded into another row
			j := rng.IntN(rows.len())
			m.set(id, j, &rows)
			ref[id] = j
		default:
			m.del(id, &rows)
			delete(ref, id)
		}
		if step%2000 == 0 {
			check(step)
		}
	}
	check(-1)
	if m.n < 1000 || len(m.aliases) == 0 {
		t.Fatalf("%d ids in the table, %d aliases: the test reached too little", m.n, len(m.aliases))
	}
}
