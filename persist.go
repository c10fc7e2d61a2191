package tidemark

import (
	"fmt"
	"slices"
)

// rebuildMaps recomputes the id, text and lead maps from the rows (the
// chains are read from the snapshot), the end of the archive's windows and
// the dependents of each row (after the dependency pairs are read).
func (l *ledger) rebuildMaps() error {
	// Sized once: growing to a million ids rehashed it twenty times.
	l.byID.reserve(l.rows.len())
	for j := range l.rows.len() {
		r := l.rows.at(j)
		if err := l.claimID(r.mem.ID, j); err != nil {
			return err
		}
		for _, id := range r.aliases {
			if err := l.claimID(id, j); err != nil {
				return err
			}
		}
		if r.retracted {
			// No later write restates or updates it (putOne, candidates).
			if !r.visible {
				l.offSurface(j)
			}
			continue
		}
		if r.normText != "" {
			l.byText[r.normText] = append(l.byText[r.normText], j)
		}
		l.indexLead(j)
		if !r.visible {
			l.offSurface(j)
		}
	}
	if err := l.linkSplits(); err != nil {
		return err
	}
	for p := range l.deps {
		l.dependents[p[1]] = append(l.dependents[p[1]], p[0])
	}
	for _, ds := range l.dependents {
		slices.Sort(ds)
	}
	return nil
}

// claimID maps id to row j while the maps are rebuilt. An id's later
// version takes it over (Put of other content): the one before must be
// superseded or retracted.
func (l *ledger) claimID(id string, j int) error {
	if k, dup := l.rowOf(id); dup && !l.rows.at(k).superseded && !l.rows.at(k).retracted {
		return fmt.Errorf("id %q twice", id)
	}
	l.setID(id, j)
	return nil
}

// indexesAgree checks that the surface index holds exactly the visible
// rows and the archive exactly the others but the purged ones.
func (c *Collection) indexesAgree() bool {
	if c.surface.Dim() != c.opts.Dim || c.archive.Dim() != c.opts.Dim ||
		c.surface.Len() != c.visible || c.archive.Len() != c.rows.len()-c.visible-c.purgedRows {
		return false
	}
	// An index yields each key once: as many keys as the rows it should
	// hold, every one such a row, make the sets equal.
	ns, na := 0, 0
	for k := range c.surface.Keys() {
		if k >= uint64(c.rows.len()) || !c.rows.at(int(k)).visible {
			return false
		}
		ns++
	}
	for k := range c.archive.Keys() {
		if k >= uint64(c.rows.len()) {
			return false
		}
		if r := c.rows.at(int(k)); r.visible || r.purged {
			return false
		}
		na++
	}
	return ns == c.visible && na == c.rows.len()-c.visible-c.purgedRows
}

// rebuildIndexes builds both HNSW indexes from the ledger.
func (c *Collection) rebuildIndexes() error {
	surface, err := c.newIndex()
	if err != nil {
		return err
	}
	archive, err := c.newIndex()
	if err != nil {
		return err
	}
	var on, off []int
	vecs := make(map[int][]float32, c.rows.len())
	for j := range c.rows.len() {
		vecs[j] = c.unitVector(j)
		if c.rows.at(j).purged {
			continue
		}
		if c.rows.at(j).visible {
			on = append(on, j)
		} else {
			off = append(off, j)
		}
	}
	if err := insertAll(surface, on, vecs); err != nil {
		return err
	}
	if err := insertAll(archive, off, vecs); err != nil {
		return err
	}
	c.surface, c.archive = surface, archive
	return nil
}
