package tidemark

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidemark/tidemark/embed"
	"github.com/tidemark/tidemark/index"
	"github.com/tidemark/tidemark/temporal"
)

// The defaults below are the values the code produced before the options
// idiom (Options.EnsureDefaults, CollectionOptions.withDefaults,
// DocumentOptions.orDefaults, ConsolidateOptions.relDefaults and the
// inline defaults of Consolidate and AssembleContext at be9705b), written
// out: WithDefaults must fill exactly these.

func TestOptionsWithDefaultsKeepsOldValues(t *testing.T) {
	for name, in := range map[string]*Options{"nil": nil, "zero": {}} {
		d := in.WithDefaults()
		if d.Clock == nil || d.Backend == nil || d.OnSync != nil || d.EmbedHTTPClient != nil || d.Embedders != nil {
			t.Errorf("%s: Clock %v, Backend %v, OnSync, EmbedHTTPClient or Embedders set", name, d.Clock != nil, d.Backend)
		}
		got := []int64{int64(d.CheckpointRecords), d.CheckpointBytes, int64(d.MaxBatch), int64(d.MaxTextBytes),
			int64(d.MaxRecordBytes), int64(d.EmbedCacheEntries), int64(d.ConsolidateEvery)}
		want := []int64{4096, 256 << 20, 10000, 1 << 20, 64 << 20, 20000, 0}
		if !slices.Equal(got, want) {
			t.Errorf("%s: WithDefaults = %v, want %v", name, got, want)
		}
		if d.NoSync {
			t.Errorf("%s: NoSync set", name)
		}
	}
	// Set fields stay; negative "off" values stay.
	set := &Options{CheckpointRecords: -1, CheckpointBytes: -1, MaxBatch: 3, MaxTextBytes: 5, MaxRecordBytes: 7, EmbedCacheEntries: -1}
	d := set.WithDefaults()
	if d.CheckpointRecords != -1 || d.CheckpointBytes != -1 || d.MaxBatch != 3 || d.MaxTextBytes != 5 || d.MaxRecordBytes != 7 || d.EmbedCacheEntries != -1 {
		t.Errorf("WithDefaults changed set fields: %+v", d)
	}
	if set.Clock != nil || set.Backend != nil {
		t.Error("WithDefaults changed its receiver")
	}
}

func TestCollectionOptionsWithDefaultsKeepsOldValues(t *testing.T) {
	tx := time.Date(2026, 3, 14, 15, 9, 26, 0, time.FixedZone("x", 3600))
	want := CollectionOptions{Dim: 8, HalfLife: 30, Epoch: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC),
		ExactThreshold: 10000, Overfetch: 8, M: 16, EfConstruction: 100, Ef: 200, ExpandHops: 8, ExpandBudget: 256,
		FeedbackPerDay: 5, FeedbackPerSource: 20}
	in := &CollectionOptions{Dim: 8}
	if got := in.createdAt(tx); got != want {
		t.Errorf("createdAt = %+v\nwant        %+v", got, want)
	}
	if *in != (CollectionOptions{Dim: 8}) {
		t.Errorf("createdAt changed its receiver: %+v", *in)
	}
	// WithDefaults leaves the Epoch, whose default is the creation day.
	noEpoch := want
	noEpoch.Epoch = time.Time{}
	if got := in.WithDefaults(); got != noEpoch {
		t.Errorf("WithDefaults = %+v\nwant          %+v", got, noEpoch)
	}
	// M and EfConstruction default to the index package's; Ef is the
	// engine's DefaultEf (raised from the index's 64 to 200 for recall).
	if d := (*index.Options)(nil).WithDefaults(); d.M != want.M || d.EfConstruction != want.EfConstruction {
		t.Errorf("index defaults %+v differ from the collection's", d)
	}
	// Set fields stay; an Epoch is taken to UTC.
	epoch := time.Date(2020, 1, 2, 3, 4, 5, 0, time.FixedZone("y", -7200))
	set := &CollectionOptions{Dim: 8, HalfLife: 7, Epoch: epoch, ExactThreshold: 1, Overfetch: 2, M: 3, EfConstruction: 4, Ef: 5,
		ExpandHops: 6, ExpandBudget: 7, FeedbackPerDay: 8, FeedbackPerSource: 9, Keys: KeysExplicit, Embedder: "hashing"}
	wantSet := *set
	wantSet.Epoch = epoch.UTC()
	if got := set.createdAt(tx); got != wantSet {
		t.Errorf("createdAt of set options = %+v, want %+v", got, wantSet)
	}
	if got := (*CollectionOptions)(nil).WithDefaults(); got.M != 16 || got.Dim != 0 {
		t.Errorf("nil WithDefaults = %+v", got)
	}
}

func TestPerCallOptionsWithDefaultsKeepOldValues(t *testing.T) {
	for name, in := range map[string]*ConsolidateOptions{"nil": nil, "zero": {}} {
		d := in.WithDefaults()
		if d.Ripple == nil || *d.Ripple != temporal.DefaultRipple() || d.Ripple.FanOut != 32 {
			t.Errorf("%s: Ripple = %+v, want %+v", name, d.Ripple, temporal.DefaultRipple())
		}
		d.Ripple = nil
		want := ConsolidateOptions{MaxEdits: 100000, Neighbors: 8, MergeSim: 0.97, MergeWords: 0.9, DependSim: 0.85,
			ConflictSim: 0.8, ConflictPenalty: 0.5, MaxNew: 50000, Budget: 30 * time.Second}
		if d != want {
			t.Errorf("%s: ConsolidateOptions.WithDefaults = %+v\nwant %+v", name, d, want)
		}
	}
	// A ripple with no fan-out takes the default one, in a copy; a
	// negative penalty is none, one above 1 all.
	rp := temporal.RippleParams{Gamma: 0.5, MaxDepth: 3}
	in := &ConsolidateOptions{Ripple: &rp, ConflictPenalty: -2}
	d := in.WithDefaults()
	if d.Ripple == &rp || *d.Ripple != (temporal.RippleParams{Gamma: 0.5, MaxDepth: 3, FanOut: 32}) || rp.FanOut != 0 {
		t.Errorf("Ripple = %+v (given %+v)", d.Ripple, rp)
	}
	if d.ConflictPenalty != 0 {
		t.Errorf("ConflictPenalty -2 → %v, want 0", d.ConflictPenalty)
	}
	if d := (&ConsolidateOptions{ConflictPenalty: 3}).WithDefaults(); d.ConflictPenalty != 1 {
		t.Errorf("ConflictPenalty 3 → %v, want 1", d.ConflictPenalty)
	}
	if d := (*DocumentOptions)(nil).WithDefaults(); d.ChunkBytes != 800 || d.Embed != nil {
		t.Errorf("DocumentOptions.WithDefaults = %+v", d)
	}
	if d := (&DocumentOptions{ChunkBytes: 100}).WithDefaults(); d.ChunkBytes != 100 {
		t.Errorf("DocumentOptions.WithDefaults changed ChunkBytes 100 to %d", d.ChunkBytes)
	}
	if d := (*ContextOptions)(nil).WithDefaults(); d.TokenBudget != 2000 {
		t.Errorf("ContextOptions.WithDefaults = %+v", d)
	}
	if DefaultK != 10 {
		t.Errorf("DefaultK = %d", DefaultK)
	}
}

// validateCase is one invalid options value and the field its error must
// name.
type validateCase struct {
	name  string
	err   error
	field string
}

func checkValidate(t *testing.T, c validateCase, want error) {
	t.Helper()
	if !errors.Is(c.err, want) {
		t.Errorf("%s: error %v, want %v", c.name, c.err, want)
		return
	}
	if !strings.Contains(c.err.Error(), c.field) {
		t.Errorf("%s: error %q does not name %s", c.name, c.err, c.field)
	}
}

func TestOptionsValidateNamesTheField(t *testing.T) {
	v := func(o Options) error {
		before := o
		err := o.Validate()
		if o.MaxBatch != before.MaxBatch || o.Clock != nil || o.Backend != nil {
			t.Errorf("Validate changed %+v", o)
		}
		return err
	}
	for _, c := range []validateCase{
		{"MaxBatch", v(Options{MaxBatch: -1}), "Options.MaxBatch"},
		{"MaxTextBytes", v(Options{MaxTextBytes: -1}), "Options.MaxTextBytes"},
		{"MaxRecordBytes negative", v(Options{MaxRecordBytes: -1}), "Options.MaxRecordBytes"},
		{"MaxRecordBytes past 1 GiB", v(Options{MaxRecordBytes: 1<<30 + 1}), "Options.MaxRecordBytes"},
		{"ConsolidateEvery", v(Options{ConsolidateEvery: -time.Second}), "Options.ConsolidateEvery"},
		{"Embedders nil entry", v(Options{Embedders: map[string]embed.Embedder{"notes": nil}}), `Options.Embedders["notes"]`},
	} {
		checkValidate(t, c, ErrOptions)
	}
	for _, o := range []*Options{nil, {}, {CheckpointRecords: -1, CheckpointBytes: -1, EmbedCacheEntries: -1}} {
		if err := o.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", o, err)
		}
	}
	if _, err := Open(t.TempDir(), &Options{MaxBatch: -1}); !errors.Is(err, ErrOptions) {
		t.Errorf("Open with a bad option: %v", err)
	}
}

func TestCollectionOptionsValidateNamesTheField(t *testing.T) {
	h, err := embed.NewHashing(&embed.HashingOptions{Dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	h16, _ := embed.NewHashing(&embed.HashingOptions{Dim: 16})
	remote := RemoteEmbedder{BaseURL: "http://localhost:1/v1", Model: "m"}
	v := func(o CollectionOptions) error {
		before := o
		err := o.Validate()
		if fmt.Sprintf("%+v", o) != fmt.Sprintf("%+v", before) { // NaN != NaN
			t.Errorf("Validate changed %+v to %+v", before, o)
		}
		return err
	}
	for _, c := range []validateCase{
		{"Dim zero", v(CollectionOptions{}), "CollectionOptions.Dim"},
		{"Dim past MaxDim", v(CollectionOptions{Dim: MaxDim + 1}), "CollectionOptions.Dim"},
		{"Method", v(CollectionOptions{Dim: 8, Method: 200}), "CollectionOptions.Method"},
		{"HalfLife negative", v(CollectionOptions{Dim: 8, HalfLife: -1}), "CollectionOptions.HalfLife"},
		{"HalfLife NaN", v(CollectionOptions{Dim: 8, HalfLife: math.NaN()}), "CollectionOptions.HalfLife"},
		{"HalfLife Inf", v(CollectionOptions{Dim: 8, HalfLife: math.Inf(1)}), "CollectionOptions.HalfLife"},
		{"Epoch", v(CollectionOptions{Dim: 8, Epoch: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}), "CollectionOptions.Epoch"},
		{"Embedder unknown", v(CollectionOptions{Dim: 8, Embedder: "word2vec"}), "CollectionOptions.Embedder"},
		{"Keys", v(CollectionOptions{Dim: 8, Keys: 7}), "CollectionOptions.Keys"},
		{"ExactThreshold negative", v(CollectionOptions{Dim: 8, ExactThreshold: -1}), "CollectionOptions.ExactThreshold"},
		// Past what a snapshot can hold: before, it was accepted and the
		// DB could not be opened again.
		{"ExactThreshold past the stored limit", v(CollectionOptions{Dim: 8, ExactThreshold: 1<<30 + 1}), "CollectionOptions.ExactThreshold"},
		{"Overfetch negative", v(CollectionOptions{Dim: 8, Overfetch: -1}), "CollectionOptions.Overfetch"},
		{"Overfetch past 1024", v(CollectionOptions{Dim: 8, Overfetch: 1025}), "CollectionOptions.Overfetch"},
		{"M negative", v(CollectionOptions{Dim: 8, M: -1}), "CollectionOptions.M"},
		{"M one", v(CollectionOptions{Dim: 8, M: 1}), "CollectionOptions.M"},
		{"M past MaxM", v(CollectionOptions{Dim: 8, M: index.MaxM + 1}), "CollectionOptions.M"},
		{"EfConstruction negative", v(CollectionOptions{Dim: 8, EfConstruction: -1}), "CollectionOptions.EfConstruction"},
		{"EfConstruction past the stored limit", v(CollectionOptions{Dim: 8, EfConstruction: 1<<30 + 1}), "CollectionOptions.EfConstruction"},
		{"Ef negative", v(CollectionOptions{Dim: 8, Ef: -1}), "CollectionOptions.Ef"},
		{"Ef past the stored limit", v(CollectionOptions{Dim: 8, Ef: 1<<30 + 1}), "CollectionOptions.Ef"},
		{"ExpandHops negative", v(CollectionOptions{Dim: 8, ExpandHops: -1}), "CollectionOptions.ExpandHops"},
		{"ExpandHops past 64", v(CollectionOptions{Dim: 8, ExpandHops: 65}), "CollectionOptions.ExpandHops"},
		{"ExpandBudget negative", v(CollectionOptions{Dim: 8, ExpandBudget: -1}), "CollectionOptions.ExpandBudget"},
		{"ExpandBudget past 2^20", v(CollectionOptions{Dim: 8, ExpandBudget: 1<<20 + 1}), "CollectionOptions.ExpandBudget"},
		{"FeedbackPerDay negative", v(CollectionOptions{Dim: 8, FeedbackPerDay: -1}), "CollectionOptions.FeedbackPerDay"},
		{"FeedbackPerSource past 2^30", v(CollectionOptions{Dim: 8, FeedbackPerSource: 1<<30 + 1}), "CollectionOptions.FeedbackPerSource"},
		{"Remote without a remote embedder", v(CollectionOptions{Dim: 8, Embedder: "hashing", Remote: remote}), "CollectionOptions.Remote"},
		{"Remote.BaseURL", v(CollectionOptions{Dim: 8, Embedder: "openai", Remote: RemoteEmbedder{BaseURL: "ftp://x", Model: "m"}}), "CollectionOptions.Remote.BaseURL"},
		{"Remote.Model", v(CollectionOptions{Dim: 8, Embedder: "ollama", Remote: RemoteEmbedder{BaseURL: "http://x"}}), "CollectionOptions.Remote.Model"},
		{"Remote.APIKeyEnv", v(CollectionOptions{Dim: 8, Embedder: "openai", Remote: RemoteEmbedder{BaseURL: "http://x", Model: "m", APIKeyEnv: "A=B"}}), "CollectionOptions.Remote.APIKeyEnv"},
		{"TextEmbedder and a named Embedder", v(CollectionOptions{Dim: 8, Embedder: "hashing", TextEmbedder: h}), "CollectionOptions.TextEmbedder"},
		{"TextEmbedder of another dimension", v(CollectionOptions{Dim: 8, TextEmbedder: h16}), "CollectionOptions.TextEmbedder"},
	} {
		checkValidate(t, c, ErrOptions)
	}
	if err := (*CollectionOptions)(nil).Validate(); !errors.Is(err, ErrOptions) {
		t.Errorf("nil: %v", err)
	}
	for _, o := range []CollectionOptions{
		{Dim: 8},
		{Dim: 8, Embedder: "hashing"},
		{Dim: 8, Embedder: "openai", Remote: remote},
		{Dim: 8, TextEmbedder: h},
		{Dim: 8, Embedder: EmbedderCustom, TextEmbedder: h},
		// How a collection created with a TextEmbedder is stored.
		{Dim: 8, Embedder: EmbedderCustom},
		{Dim: 8, ExactThreshold: 1 << 30, EfConstruction: 1 << 30, Ef: 1 << 30, M: index.MaxM, Overfetch: 1024, ExpandHops: 64, ExpandBudget: 1 << 20},
	} {
		if err := v(o); err != nil {
			t.Errorf("Validate(%+v) = %v", o, err)
		}
	}
}

func TestCreateCollectionValidatesOptions(t *testing.T) {
	ctx := context.Background()
	db := openTest(t, t.TempDir(), &Options{NoSync: true})
	defer db.Close()
	if _, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 8, ExactThreshold: 1<<30 + 1}); !errors.Is(err, ErrOptions) {
		t.Fatalf("a count the snapshot cannot hold: %v", err)
	}
	if _, err := db.CreateCollection(ctx, "c", nil); !errors.Is(err, ErrOptions) {
		t.Fatalf("nil options: %v", err)
	}
	if got := db.Collections(); len(got) != 0 {
		t.Fatalf("collections %v", got)
	}
}

func TestPerCallOptionsValidateNamesTheField(t *testing.T) {
	v := func(o ConsolidateOptions) error {
		before := o
		err := o.Validate()
		if fmt.Sprintf("%+v", o) != fmt.Sprintf("%+v", before) { // NaN != NaN
			t.Errorf("Validate changed %+v", before)
		}
		return err
	}
	for _, c := range []validateCase{
		{"Now", v(ConsolidateOptions{Now: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}), "ConsolidateOptions.Now"},
		{"MaxEdits", v(ConsolidateOptions{MaxEdits: -1}), "ConsolidateOptions.MaxEdits"},
		{"MaxNew", v(ConsolidateOptions{MaxNew: -1}), "ConsolidateOptions.MaxNew"},
		{"Budget", v(ConsolidateOptions{Budget: -1}), "ConsolidateOptions.Budget"},
		{"Neighbors negative", v(ConsolidateOptions{Neighbors: -1}), "ConsolidateOptions.Neighbors"},
		{"Neighbors past 1024", v(ConsolidateOptions{Neighbors: 1025}), "ConsolidateOptions.Neighbors"},
		{"MergeSim", v(ConsolidateOptions{MergeSim: 1.5}), "ConsolidateOptions.MergeSim"},
		{"MergeWords", v(ConsolidateOptions{MergeWords: -0.1}), "ConsolidateOptions.MergeWords"},
		{"DependSim", v(ConsolidateOptions{DependSim: math.NaN()}), "ConsolidateOptions.DependSim"},
		{"ConflictSim", v(ConsolidateOptions{ConflictSim: 2}), "ConsolidateOptions.ConflictSim"},
		{"ConflictPenalty", v(ConsolidateOptions{ConflictPenalty: math.NaN()}), "ConsolidateOptions.ConflictPenalty"},
		{"Ripple.Gamma", v(ConsolidateOptions{Ripple: &temporal.RippleParams{Gamma: 2}}), "ConsolidateOptions.Ripple"},
		{"Ripple.MaxDepth", v(ConsolidateOptions{Ripple: &temporal.RippleParams{MaxDepth: 17}}), "ConsolidateOptions.Ripple"},
		{"Ripple.FanOut", v(ConsolidateOptions{Ripple: &temporal.RippleParams{FanOut: -1}}), "ConsolidateOptions.Ripple"},
		{"ChunkBytes", (&DocumentOptions{ChunkBytes: 15}).Validate(), "DocumentOptions.ChunkBytes"},
		{"ChunkBytes negative", (&DocumentOptions{ChunkBytes: -1}).Validate(), "DocumentOptions.ChunkBytes"},
		{"TokenBudget small", (&ContextOptions{TokenBudget: 5}).Validate(), "ContextOptions.TokenBudget"},
		{"TokenBudget negative", (&ContextOptions{TokenBudget: -1}).Validate(), "ContextOptions.TokenBudget"},
		{"TokenBudget past the limit", (&ContextOptions{TokenBudget: MaxTokenBudget + 1}).Validate(), "ContextOptions.TokenBudget"},
	} {
		checkValidate(t, c, ErrInvalid)
	}
	for name, err := range map[string]error{
		"nil consolidate": (*ConsolidateOptions)(nil).Validate(),
		"zero consolidate": (&ConsolidateOptions{ConflictPenalty: -1, Ripple: &temporal.RippleParams{Gamma: 1, MaxDepth: 16},
			MergeSim: 1, MergeWords: 1, DependSim: 1, ConflictSim: 1, Neighbors: 1024}).Validate(),
		"nil document":  (*DocumentOptions)(nil).Validate(),
		"min document":  (&DocumentOptions{ChunkBytes: MinChunkBytes}).Validate(),
		"nil context":   (*ContextOptions)(nil).Validate(),
		"large context": (&ContextOptions{TokenBudget: MaxTokenBudget}).Validate(),
	} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	// The methods report the same errors, and check what depends on the
	// DB: a chunk size past Options.MaxTextBytes.
	ctx := context.Background()
	db := openTest(t, t.TempDir(), &Options{NoSync: true, MaxTextBytes: 100})
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", &CollectionOptions{Dim: 64, Embedder: "hashing"})
	if err != nil {
		t.Fatal(err)
	}
	for _, cs := range []validateCase{
		{"Consolidate", func() error { _, err := c.Consolidate(ctx, &ConsolidateOptions{MergeSim: 2}); return err }(), "ConsolidateOptions.MergeSim"},
		{"PutDocument", func() error {
			_, err := c.PutDocument(ctx, "d", "some text", &DocumentOptions{ChunkBytes: 8})
			return err
		}(), "DocumentOptions.ChunkBytes"},
		{"PutDocument past MaxTextBytes", func() error { _, err := c.PutDocument(ctx, "d", "some text", nil); return err }(), "DocumentOptions.ChunkBytes"},
		{"UpdateDocument", func() error {
			_, err := c.UpdateDocument(ctx, "d", "some text", &DocumentOptions{ChunkBytes: 8})
			return err
		}(), "DocumentOptions.ChunkBytes"},
		{"AssembleContext", func() error {
			_, err := c.AssembleContext(ctx, &SearchRequest{Text: "x"}, &ContextOptions{TokenBudget: 1})
			return err
		}(), "ContextOptions.TokenBudget"},
	} {
		checkValidate(t, cs, ErrInvalid)
	}
	if _, err := c.PutDocument(ctx, "d", "some text", &DocumentOptions{ChunkBytes: 100}); err != nil {
		t.Fatalf("a chunk size of MaxTextBytes: %v", err)
	}
}
