package tidemark

import (
	"fmt"
	"slices"
)

// rebuildMaps recomputes the id, text and lead maps from the rows (the
// chains are read from the snapshot), the end of the archive's windows and
// the dependents of each row (after the dependency pairs are read).
func (l *ledger) rebuildMaps() error {
	for j := range l.rows.len() {
		r := l.rows.at(j)
		for _, id := range append([]string{r.mem.ID}, r.aliases...) {
			// An id's later version takes it over (Put of other content):
			// the one before is superseded or was retracted.
			if k, dup := l.byID[id]; dup && !l.rows.at(k).superseded && !l.rows.at(k).retracted {
				return fmt.Errorf("id %q twice", id)
			}
			l.byID[id] = j
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

// indexesAgree checks that the surface index holds exactly the visible
// rows and the archive exactly the others but the purged ones.
func (c *Collection) indexesAgree() bool {
	if c.surface.Dim() != c.opts.Dim || c.archive.Dim() != c.opts.Dim ||
		c.surface.Len() != c.visible || c.archive.Len() != c.rows.len()-c.visible-c.purgedRows {
		return false
	}
	for j := range c.rows.len() {
		r := c.rows.at(j)
		archived := !r.visible && !r.purged
		if r.visible != c.surface.Contains(uint64(j)) || archived != c.archive.Contains(uint64(j)) {
			return false
		}
	}
	return true
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
