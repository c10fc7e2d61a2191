package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/temporal"
)

// BackendOptions configure a Backend.
type BackendOptions struct {
	// BF16 keeps the corpus's vectors on the device as bfloat16 (half the
	// bytes of float32: a scan reads half as much). Products still
	// accumulate in float32; a stored element is the float32 rounded to
	// 8 significant bits, within 2⁻⁸ of it relative, so a cosine of unit
	// vectors moves by at most 2⁻⁸ (|Σ q·(v − bf16(v))| ≤ 2⁻⁸·Σ|q·v| ≤
	// 2⁻⁸), the bound TestBackendBF16 checks.
	BF16 bool
	// Threads is the threads per block (a multiple of 32 up to 512, the
	// kernels' TM_MAX_WARPS; default 256) and Blocks the blocks of a
	// scoring launch (default 8 per multiprocessor).
	Threads, Blocks int
	// Chunk is the rows one block of the top-k selection reduces to k
	// (default 4096): every chunk's k cross to the merge on the device,
	// and only the final k cross the bus.
	Chunk int
	// Resident is the number of batches kept on the device at once
	// (default 8: a service's collections each keep theirs); the least
	// recently used is dropped for a new one, and when the device runs
	// out of memory. A kept copy also keeps its *kernels.Batch reachable
	// (it is the copy's key), until it is dropped or the backend closed.
	Resident int
}

// Backend is the fused stage on a CUDA device, a kernels.Backend: the
// scan (the dot products, fp32 or bf16 storage, fp32 accumulation), every
// mask and temporal signal (double precision, kernels/fused.go's
// arithmetic) and the top-k selection run as kernels over a corpus kept
// on the device. The corpus is uploaded on first use and then kept up to
// date incrementally: rows appended to the batch are copied on the next
// call, rows written in place (recorded by kernels.Batch.Changed) are
// copied again. It is safe for concurrent use; calls run one at a time on
// the device.
type Backend struct {
	dev *Device
	o   BackendOptions

	mu   sync.Mutex  // one call at a time: the buffers below are shared
	res  *resident   // the current call's batch
	kept []*resident // the batches on the device, most recently used first
	// per-call buffers, grown as needed
	params, queries, qvecs, lambdas, sims, scores, reasons, stats, hits, merged, counts buffer
}

// NewBackend returns the fused stage on dev. Close frees its device
// memory (not the device).
func NewBackend(dev *Device, o *BackendOptions) *Backend {
	b := &Backend{dev: dev}
	if o != nil {
		b.o = *o
	}
	if b.o.Threads <= 0 || b.o.Threads%32 != 0 || b.o.Threads > 32*maxWarps {
		b.o.Threads = 256
	}
	if b.o.Blocks <= 0 {
		b.o.Blocks = 8 * max(1, dev.Info().Multiprocessors)
	}
	if b.o.Chunk <= 0 {
		b.o.Chunk = 4096
	}
	if b.o.Resident <= 0 {
		b.o.Resident = 8
	}
	return b
}

// Name implements kernels.Backend: "cuda/" and the device's name.
func (b *Backend) Name() string {
	s := "cuda/" + b.dev.Info().Device
	if b.o.BF16 {
		s += "/bf16"
	}
	return s
}

// Close frees the backend's device memory; a later call uploads its
// batch again.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dev.do(func() error {
		for _, r := range b.kept {
			r.free(b.dev)
		}
		b.kept, b.res = nil, nil
		for _, buf := range []*buffer{&b.params, &b.queries, &b.qvecs, &b.lambdas, &b.sims, &b.scores, &b.reasons, &b.stats, &b.hits, &b.merged, &b.counts} {
			b.dev.free(buf)
		}
		return nil
	})
}

// resident is the device copy of a batch.
type resident struct {
	batch   *kernels.Batch
	dim     int
	n, rows int    // rows copied, rows allocated
	seq     uint64 // the batch's change log, copied up to here
	bf16    bool
	vecs    buffer
	cols    buffer
	kind    buffer
	status  buffer
	group   buffer
	ids     buffer
	corpus  buffer // the tmCorpus
}

// elemSize is the bytes of one stored vector element.
func (r *resident) elemSize() uintptr {
	if r.bf16 {
		return 2
	}
	return 4
}

func (r *resident) free(d *Device) {
	for _, buf := range []*buffer{&r.vecs, &r.cols, &r.kind, &r.status, &r.group, &r.ids, &r.corpus} {
		d.free(buf)
	}
	*r = resident{}
}

// residentFor returns bt's device copy, most recently used first: a new,
// empty one (the least recently used dropped beyond Resident) when bt has
// none.
func (b *Backend) residentFor(bt *kernels.Batch) *resident {
	for i, r := range b.kept {
		if r.batch == bt {
			copy(b.kept[1:i+1], b.kept[:i])
			b.kept[0] = r
			return r
		}
	}
	if len(b.kept) >= b.o.Resident {
		b.kept[len(b.kept)-1].free(b.dev)
		b.kept = b.kept[:len(b.kept)-1]
	}
	r := &resident{}
	b.kept = append([]*resident{r}, b.kept...)
	return r
}

// sync brings the device copy of bt up to date (owner thread): the whole
// batch when it is new, shrank, outgrew its allocation, changed more than
// a quarter of its rows or its change log lost track; otherwise its
// appended rows and the rows changed in place, copied as runs of nearby
// rows. When the device is out of memory the other batches' copies are
// dropped and the upload tried once more.
func (b *Backend) sync(bt *kernels.Batch) error {
	r := b.residentFor(bt)
	b.res = r
	err := b.syncResident(r, bt)
	var e *Error
	if errors.As(err, &e) && e.Code == cudaErrorOutOfMem && len(b.kept) > 1 {
		for _, o := range b.kept[1:] {
			o.free(b.dev)
		}
		b.kept = b.kept[:1]
		err = b.syncResident(r, bt)
	}
	return err
}

func (b *Backend) syncResident(r *resident, bt *kernels.Batch) error {
	d := b.dev
	n := bt.Len()
	changed, next, complete := bt.ChangedSince(r.seq)
	full := r.batch != bt || r.dim != bt.Dim || n < r.n || n > r.rows || !complete || r.bf16 != b.o.BF16 ||
		len(changed) > max(r.n/4, 64)
	if full {
		rows := n // exactly the batch's rows on a first upload; room to grow after that
		if r.batch == bt && n > r.rows {
			rows = n + n/2
		}
		r.free(d)
		r.batch, r.dim, r.bf16 = bt, bt.Dim, b.o.BF16
		r.rows = max(rows, 64)
		var err error
		for _, a := range []struct {
			buf  *buffer
			size uintptr
		}{
			{&r.vecs, uintptr(r.rows*bt.Dim) * r.elemSize()}, {&r.cols, uintptr(numColumns*r.rows) * 4},
			{&r.kind, uintptr(r.rows)}, {&r.status, uintptr(r.rows)}, {&r.group, uintptr(r.rows) * 4},
			{&r.ids, uintptr(r.rows) * 8}, {&r.corpus, unsafe.Sizeof(tmCorpus{})},
		} {
			if *a.buf, err = d.alloc(a.size); err != nil {
				r.free(d)
				return err
			}
		}
		if err := b.copyRows(bt, 0, n); err != nil {
			r.free(d)
			return err
		}
	} else {
		if n > r.n {
			if err := b.copyRows(bt, r.n, n); err != nil {
				r.free(d)
				return err
			}
		}
		// The rows changed in place before r.n, sorted and deduplicated,
		// copied as runs: rows at most 64 apart share a copy.
		rows := slices.Sorted(slices.Values(changed))
		rows = slices.Compact(rows)
		for i := 0; i < len(rows) && rows[i] < r.n; {
			j := i + 1
			for j < len(rows) && rows[j] < r.n && rows[j]-rows[j-1] <= 64 {
				j++
			}
			if err := b.copyRows(bt, rows[i], rows[j-1]+1); err != nil {
				r.free(d)
				return err
			}
			i = j
		}
	}
	r.n, r.seq = n, next
	c := tmCorpus{Vecs: r.vecs.ptr, Cols: r.cols.ptr, Kind: r.kind.ptr, Status: r.status.ptr, Group: r.group.ptr,
		IDs: r.ids.ptr, N: int64(n), Dim: int64(bt.Dim), BF16: boolWord(r.bf16), ColStride: int64(r.rows)}
	p, sz := bytesOf(&c)
	return d.upload(r.corpus, 0, p, sz)
}

// copyRows copies rows [lo, hi) whole.
func (b *Backend) copyRows(bt *kernels.Batch, lo, hi int) error {
	if lo >= hi {
		return nil
	}
	if err := b.copyVectors(bt, lo, hi); err != nil {
		return err
	}
	return b.copyColumns(bt, lo, hi)
}

// copyVectors copies the vectors of rows [lo, hi), as bfloat16 when the
// copy is.
func (b *Backend) copyVectors(bt *kernels.Batch, lo, hi int) error {
	r, d, dim := b.res, b.dev, bt.Dim
	src := bt.Vectors[lo*dim : hi*dim]
	if !r.bf16 {
		return d.upload(r.vecs, uintptr(lo*dim)*4, unsafe.Pointer(&src[0]), uintptr(len(src))*4)
	}
	const step = 1 << 20
	h := make([]uint16, min(len(src), step))
	for off := 0; off < len(src); off += step {
		part := src[off:min(len(src), off+step)]
		for i, v := range part {
			h[i] = toBF16(v)
		}
		if err := d.upload(r.vecs, uintptr(lo*dim+off)*2, unsafe.Pointer(&h[0]), uintptr(len(part))*2); err != nil {
			return err
		}
	}
	return nil
}

// copyColumns copies the metadata of rows [lo, hi).
func (b *Backend) copyColumns(bt *kernels.Batch, lo, hi int) error {
	r, d := b.res, b.dev
	cols := [numColumns][]float32{bt.Created, bt.ValidFrom, bt.ValidTo, bt.RecordedAt, bt.RetiredAt, bt.Lambda,
		bt.Floor, bt.BaseConf, bt.ConfFrom, bt.Access, bt.Positive, bt.Negative, bt.Degree}
	m := uintptr(hi - lo)
	for c, col := range cols {
		if err := d.upload(r.cols, uintptr(c*r.rows+lo)*4, unsafe.Pointer(&col[lo]), m*4); err != nil {
			return err
		}
	}
	for _, a := range []struct {
		buf  buffer
		src  unsafe.Pointer
		size uintptr
	}{
		{r.kind, unsafe.Pointer(&bt.Kind[lo]), 1}, {r.status, unsafe.Pointer(&bt.Status[lo]), 1},
		{r.group, unsafe.Pointer(&bt.Group[lo]), 4}, {r.ids, unsafe.Pointer(&bt.ID[lo]), 8},
	} {
		if err := d.upload(a.buf, uintptr(lo)*a.size, a.src, m*a.size); err != nil {
			return err
		}
	}
	return nil
}

// toBF16 rounds a float32 to bfloat16, to nearest with ties to even (the
// inputs are finite: kernels.Batch holds unit vectors).
func toBF16(v float32) uint16 {
	u := math.Float32bits(v)
	return uint16((u + 0x7fff + (u>>16)&1) >> 16)
}

// ensure makes buf hold at least size bytes (owner thread).
func (b *Backend) ensure(buf *buffer, size uintptr) error {
	if buf.size >= size && buf.ptr != 0 {
		return nil
	}
	if err := b.dev.free(buf); err != nil {
		return err
	}
	var err error
	*buf, err = b.dev.alloc(max(size, 256))
	return err
}

// call is one Score, TopK or ScoreMany.
type call struct {
	bt       *kernels.Batch
	qs       []kernels.Query
	p        *temporal.Params
	k        int
	qn       []float32
	scoreAll bool // Score: every row's score and reason come back
	count    bool // TopK: the reason counts come back
	many     bool // ScoreMany
	// results
	hits    [][]kernels.Hit
	stats   []kernels.Stats
	out     []float64
	reasons []temporal.Reason
}

// run validates the call and runs it on the device.
func (b *Backend) run(ctx context.Context, c *call) error {
	c.qn = make([]float32, len(c.qs)*c.bt.Dim)
	if err := kernels.Prepare(c.bt, c.qs, c.p, c.k, c.qn); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dev.do(func() error { return b.exec(ctx, c) })
}

// exec runs a call on the owner thread: the corpus brought up to date,
// then the queries in groups of maxQueries, the context checked between
// launches.
func (b *Backend) exec(ctx context.Context, c *call) error {
	if err := b.sync(c.bt); err != nil {
		return err
	}
	n := c.bt.Len()
	c.hits = make([][]kernels.Hit, len(c.qs))
	c.stats = make([]kernels.Stats, len(c.qs))
	if n == 0 {
		return nil
	}
	pr := newParams(c.p)
	if err := b.ensure(&b.params, unsafe.Sizeof(pr)); err != nil {
		return err
	}
	p, sz := bytesOf(&pr)
	if err := b.dev.upload(b.params, 0, p, sz); err != nil {
		return err
	}
	step := maxQueries
	if c.tiled() {
		step = tileQueries
	}
	for g := 0; g < len(c.qs); g += step {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := b.group(ctx, c, g, min(len(c.qs), g+step)); err != nil {
			return err
		}
	}
	return nil
}

// tiled reports whether the call runs the batched tile kernel: many
// queries (ScoreMany) without pool statistics, which need tm_fused's two
// passes.
func (c *call) tiled() bool { return c.many && !c.p.Pooled() }

// group runs queries [lo, hi) of a call: one fused launch (two passes
// under pooled parameters, the pool statistics reduced here between
// them), then the selection, the merge and the counts, or every score.
func (b *Backend) group(ctx context.Context, c *call, lo, hi int) error {
	d, bt := b.dev, c.bt
	n, dim, nq := bt.Len(), bt.Dim, hi-lo
	qs := make([]tmQuery, nq)
	var lambdas []float64
	if c.p.AdaptiveDecay {
		for j := lo; j < hi; j++ {
			lambdas = append(lambdas, c.qs[j].GroupLambda...)
		}
		if len(lambdas) > 0 {
			if err := b.ensure(&b.lambdas, uintptr(len(lambdas))*8); err != nil {
				return err
			}
			if err := d.upload(b.lambdas, 0, unsafe.Pointer(&lambdas[0]), uintptr(len(lambdas))*8); err != nil {
				return err
			}
		}
	}
	off := uint64(0)
	for j := range qs {
		var gl uint64
		if c.p.AdaptiveDecay {
			gl = b.lambdas.ptr + off*8
			off += uint64(len(c.qs[lo+j].GroupLambda))
		}
		qs[j] = newQuery(&c.qs[lo+j], gl)
	}
	for _, a := range []struct {
		buf  *buffer
		size uintptr
	}{
		{&b.queries, uintptr(nq) * unsafe.Sizeof(tmQuery{})}, {&b.qvecs, uintptr(nq*dim) * 4},
		{&b.sims, uintptr(nq*n) * 4}, {&b.scores, uintptr(nq*n) * 8}, {&b.reasons, uintptr(nq * n)},
		{&b.stats, uintptr(b.o.Blocks*nq*4) * 8}, {&b.counts, uintptr(nq*16) * 4},
	} {
		if err := b.ensure(a.buf, a.size); err != nil {
			return err
		}
	}
	upQueries := func() error {
		return d.upload(b.queries, 0, unsafe.Pointer(&qs[0]), uintptr(nq)*unsafe.Sizeof(tmQuery{}))
	}
	if err := upQueries(); err != nil {
		return err
	}
	qn := c.qn[lo*dim : hi*dim]
	if err := d.upload(b.qvecs, 0, unsafe.Pointer(&qn[0]), uintptr(len(qn))*4); err != nil {
		return err
	}
	grid, block := [3]uint32{uint32(b.o.Blocks), 1, 1}, [3]uint32{uint32(b.o.Threads), 1, 1}
	fused := func(pass int32) error {
		return d.launch("tm_fused", grid, block, 0, b.res.corpus, b.params, b.queries, b.qvecs, int32(nq), pass,
			int64(0), int64(n), b.sims, b.scores, b.reasons, b.stats)
	}
	switch {
	case c.tiled():
		if err := d.launch("tm_tile", grid, block, 0, b.res.corpus, b.params, b.queries, b.qvecs, int32(nq),
			int64(0), int64(n), b.sims, b.scores, b.reasons); err != nil {
			return err
		}
	case c.p.Pooled():
		if err := fused(1); err != nil {
			return err
		}
		st := make([]float64, b.o.Blocks*nq*4)
		if err := d.download(unsafe.Pointer(&st[0]), b.stats, 0, uintptr(len(st))*8); err != nil {
			return err
		}
		for blk := 0; blk < b.o.Blocks; blk++ {
			for j := range qs {
				s := st[(blk*nq+j)*4:]
				q := &qs[j]
				q.MinSim, q.MaxSim = math.Min(q.MinSim, s[0]), math.Max(q.MaxSim, s[1])
				q.MinAge, q.MaxAge = math.Min(q.MinAge, s[2]), math.Max(q.MaxAge, s[3])
			}
		}
		if err := upQueries(); err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fused(2); err != nil {
			return err
		}
	default:
		if err := fused(0); err != nil {
			return err
		}
	}
	if c.scoreAll {
		return b.fetchScores(c, n)
	}
	return b.selectTopK(c, lo, nq, n)
}

// fetchScores downloads every row's score and reason (Score: one query).
func (b *Backend) fetchScores(c *call, n int) error {
	d := b.dev
	if err := d.download(unsafe.Pointer(&c.out[0]), b.scores, 0, uintptr(n)*8); err != nil {
		return err
	}
	rs := make([]byte, n)
	if err := d.download(unsafe.Pointer(&rs[0]), b.reasons, 0, uintptr(n)); err != nil {
		return err
	}
	st := &c.stats[0]
	for i, r := range rs {
		c.reasons[i] = temporal.Reason(r)
		if r == 0 {
			st.Scored++
		} else {
			st.Removed[r]++
		}
	}
	return nil
}

// selectTopK runs the selection per chunk (counting the reasons for
// TopK's Stats on the way) and, over several chunks, the merge per query on
// the device, and downloads each query's k best.
func (b *Backend) selectTopK(c *call, lo, nq, n int) error {
	// No more than n results exist, nor more than a chunk's rows in one
	// chunk: k beyond them would only grow the buffers.
	d, k := b.dev, min(c.k, n)
	if k == 0 && !c.count {
		return nil
	}
	chunks := (n + b.o.Chunk - 1) / b.o.Chunk
	kk := max(min(k, b.o.Chunk), 1) // a selection of none still counts
	if err := b.ensure(&b.hits, uintptr(nq*chunks*kk)*unsafe.Sizeof(tmHit{})); err != nil {
		return err
	}
	counts := buffer{}
	var zero []uint32
	if c.count {
		zero = make([]uint32, nq*16)
		if err := d.upload(b.counts, 0, unsafe.Pointer(&zero[0]), uintptr(len(zero))*4); err != nil {
			return err
		}
		counts = b.counts
	}
	block := [3]uint32{uint32(b.o.Threads), 1, 1}
	if err := d.launch("tm_select", [3]uint32{uint32(chunks), uint32(nq), 1}, block, 0,
		b.scores, b.sims, b.reasons, b.res.ids, int64(0), int64(n), int32(kk), int64(b.o.Chunk), b.hits, counts); err != nil {
		return err
	}
	if c.count {
		if err := d.download(unsafe.Pointer(&zero[0]), b.counts, 0, uintptr(len(zero))*4); err != nil {
			return err
		}
		for j := 0; j < nq; j++ {
			st := &c.stats[lo+j]
			st.Scored += int(zero[j*16])
			for r := 1; r < 16 && r < len(st.Removed); r++ {
				st.Removed[r] += int(zero[j*16+r])
			}
		}
	}
	if k == 0 {
		return nil
	}
	final := b.hits // one chunk: its k are the query's
	if chunks > 1 {
		if err := b.ensure(&b.merged, uintptr(nq*k)*unsafe.Sizeof(tmHit{})); err != nil {
			return err
		}
		if err := d.launch("tm_merge", [3]uint32{uint32(nq), 1, 1}, block, 0, b.hits, int32(chunks*kk), int32(k), b.merged); err != nil {
			return err
		}
		final = b.merged
	}
	out := make([]tmHit, nq*k)
	if err := d.download(unsafe.Pointer(&out[0]), final, 0, uintptr(len(out))*unsafe.Sizeof(tmHit{})); err != nil {
		return err
	}
	for j := 0; j < nq; j++ {
		var hs []kernels.Hit
		for _, h := range out[j*k : (j+1)*k] {
			if h.Index < 0 {
				break
			}
			hs = append(hs, kernels.Hit{Index: int(h.Index), ID: h.ID, Score: h.Score, Sim: h.Sim})
		}
		c.hits[lo+j] = hs
	}
	return nil
}

// Score implements kernels.Backend.
func (b *Backend) Score(ctx context.Context, bt *kernels.Batch, q *kernels.Query, p *temporal.Params, out []float64, reasons []temporal.Reason) (kernels.Stats, error) {
	if len(out) != bt.Len() || len(reasons) != bt.Len() {
		return kernels.Stats{}, fmt.Errorf("%w: output has %d scores and %d reasons for %d candidates", kernels.ErrInvalid, len(out), len(reasons), bt.Len())
	}
	if q == nil {
		return kernels.Stats{}, fmt.Errorf("%w: nil query", kernels.ErrInvalid)
	}
	c := &call{bt: bt, qs: []kernels.Query{*q}, p: p, scoreAll: true, out: out, reasons: reasons}
	if err := b.run(ctx, c); err != nil {
		return kernels.Stats{}, err
	}
	return c.stats[0], nil
}

// TopK implements kernels.Backend.
func (b *Backend) TopK(ctx context.Context, bt *kernels.Batch, q *kernels.Query, p *temporal.Params, k int, dst []kernels.Hit) ([]kernels.Hit, kernels.Stats, error) {
	if q == nil {
		return dst, kernels.Stats{}, fmt.Errorf("%w: nil query", kernels.ErrInvalid)
	}
	c := &call{bt: bt, qs: []kernels.Query{*q}, p: p, k: k, count: true}
	if err := b.run(ctx, c); err != nil {
		return dst, kernels.Stats{}, err
	}
	return append(dst, c.hits[0]...), c.stats[0], nil
}

// ScoreMany implements kernels.Backend: the queries run as a tiled
// product, sixteen per launch (tm_tile; eight per tm_fused launch under
// pooled parameters), each group's top k selected on the device.
func (b *Backend) ScoreMany(ctx context.Context, bt *kernels.Batch, qs []kernels.Query, p *temporal.Params, k int, dst [][]kernels.Hit) ([][]kernels.Hit, error) {
	if len(qs) == 0 {
		return dst[:0], nil
	}
	c := &call{bt: bt, qs: qs, p: p, k: k, many: true}
	if err := b.run(ctx, c); err != nil {
		return dst, err
	}
	if cap(dst) < len(qs) {
		dst = make([][]kernels.Hit, len(qs))
	}
	dst = dst[:len(qs)]
	for j := range qs {
		dst[j] = append(dst[j][:0], c.hits[j]...)
	}
	return dst, nil
}
