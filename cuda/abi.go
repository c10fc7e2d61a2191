package cuda

import (
	"math"
	"unsafe"

	"github.com/tidemark/tidemark/kernels"
	"github.com/tidemark/tidemark/temporal"
)

// The structures of kernels/tm_abi.h, field for field: every field is 8
// bytes, so neither side pads, and a value is uploaded as its bytes.
// TestABIMatchesHeader parses the header and checks names, order and
// types.

// maxQueries is TM_MAXQ, the queries of one tm_fused launch; maxWarps
// TM_MAX_WARPS, the warps of a block; tileQueries TM_TILE_QUERIES, the
// queries of one tm_tile launch.
const (
	maxQueries  = 8
	maxWarps    = 16
	tileQueries = 16
)

// Columns of tmCorpus.Cols, in kernels.Batch's order (TM_COL_*).
const numColumns = 13

type tmCorpus struct {
	Vecs, Cols, Kind, Status, Group, IDs uint64
	N, Dim, BF16, ColStride              int64
}

type tmParams struct {
	WSim, WTime, WConf, WRel                                                                       float64
	Combine, MaskExpired, MaskRetired, IgnoreValidity, NormalizeSim, PoolRecency, Adaptive, Pooled int64
	OutOfWindow, EventBoost, EventFloor, EventGateFactor, RelevanceThreshold, RelevancePenalty     float64
	MinSim, StaleBelow, ConfLambda, AlphaPos, AlphaNeg, Beta, ConfMin, ConfMax                     float64
	HoldStatic, HoldVersioned                                                                      int64
}

type tmQuery struct {
	At, TxAt, RangeFrom, RangeTo   float64
	HasRange, Kinds, Statuses      int64
	GroupLambda                    uint64
	MinSim, MaxSim, MinAge, MaxAge float64
}

type tmHit struct {
	Score float64
	ID    uint64
	Index int64
	Sim   float64
}

func boolWord(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// newParams flattens p as the kernels read it.
func newParams(p *temporal.Params) tmParams {
	c := &p.Confidence
	return tmParams{
		WSim: p.Weights.Sim, WTime: p.Weights.Time, WConf: p.Weights.Conf, WRel: p.Weights.Rel,
		Combine: int64(p.Combine), MaskExpired: boolWord(p.MaskExpired), MaskRetired: boolWord(p.MaskRetired),
		IgnoreValidity: boolWord(p.IgnoreValidity), NormalizeSim: boolWord(p.NormalizeSim), PoolRecency: boolWord(p.PoolRecency),
		Adaptive: boolWord(p.AdaptiveDecay), Pooled: boolWord(p.Pooled()),
		OutOfWindow: p.OutOfWindow, EventBoost: p.EventBoost, EventFloor: p.EventFloor, EventGateFactor: p.EventGateFactor,
		RelevanceThreshold: p.RelevanceThreshold, RelevancePenalty: p.RelevancePenalty, MinSim: p.MinSim, StaleBelow: p.StaleBelow,
		ConfLambda: temporal.Lambda(c.HalfLife), AlphaPos: c.AlphaPos, AlphaNeg: c.AlphaNeg, Beta: c.Beta,
		ConfMin: c.Min, ConfMax: c.Max, HoldStatic: boolWord(c.HoldStatic), HoldVersioned: boolWord(c.HoldVersioned),
	}
}

// newQuery is q's time context; groupLambda is the device copy of its
// drift λs (0 without adaptive decay).
func newQuery(q *kernels.Query, groupLambda uint64) tmQuery {
	t := &q.Time
	return tmQuery{
		At: t.At, TxAt: t.TxAt, RangeFrom: t.Range.From, RangeTo: t.Range.To, HasRange: boolWord(t.HasRange),
		Kinds: int64(t.Kinds), Statuses: int64(t.Statuses), GroupLambda: groupLambda,
		MinSim: math.Inf(1), MaxSim: math.Inf(-1), MinAge: math.Inf(1), MaxAge: math.Inf(-1),
	}
}

// bytesOf is the memory of a value of one of the ABI structures (or a
// slice's backing array), for an upload or download.
func bytesOf[T any](v *T) (unsafe.Pointer, uintptr) { return unsafe.Pointer(v), unsafe.Sizeof(*v) }
