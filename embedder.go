package tidemark

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/tidemark/tidemark/embed"
)

// A collection's embedder (CollectionOptions.Embedder) turns the text of
// memories and queries given without a vector into one. The offline
// default ("hashing") and its word-only twin need no network; "openai"
// and "ollama" call the endpoint of CollectionOptions.Remote through
// embed.Remote: batched, a bounded number of requests in flight, a
// timeout per request, retries with backoff on 429 and 5xx that honour
// Retry-After. Their vectors are cached by model and text hash, in memory
// and in the data directory's embeddings.cache (Options.EmbedCacheEntries),
// so a replayed or repeated write does not pay twice. An embedder that
// fails refuses the write, with an error wrapping ErrEmbedder that names
// the endpoint (never the API key); nothing of the batch is stored.
//
// A Go program can give any embed.Embedder instead
// (CollectionOptions.TextEmbedder). Only its name, EmbedderCustom, is
// stored: after Close, Open gives the value back to the collection from
// Options.Embedders, and without it the collection embeds nothing (see
// missingEmbedder).

// embedCacheFile is the remote embeddings' cache in the data directory.
const embedCacheFile = "embeddings.cache"

// newEmbedder builds the embedder of collection name's options, or nil.
// For EmbedderCustom it is o.TextEmbedder when set (at creation), else
// Options.Embedders[name] (at Open), recorded in o.TextEmbedder, else a
// missingEmbedder.
func (db *DB) newEmbedder(name string, o *CollectionOptions) (embed.Embedder, error) {
	switch o.Embedder {
	case "":
		return nil, nil
	case "hashing":
		opts := embed.SubwordOptions(o.Dim)
		return embed.NewHashing(&opts)
	case "hashing-words":
		return embed.NewHashing(&embed.HashingOptions{Dim: o.Dim})
	case EmbedderCustom:
		if o.TextEmbedder == nil {
			o.TextEmbedder = db.opts.Embedders[name]
		}
		if o.TextEmbedder == nil {
			return missingEmbedder{coll: name}, nil
		}
		// Never an error here: replay would lose the collection.
		// checkEmbedders and creatable check the entry's dimension first.
		return o.TextEmbedder, nil
	}
	ro := &embed.RemoteOptions{API: embed.RemoteAPI(o.Embedder), BaseURL: o.Remote.BaseURL, Model: o.Remote.Model,
		Dimensions: o.Dim, APIKeyEnv: o.Remote.APIKeyEnv, HTTPClient: db.opts.EmbedHTTPClient}
	if db.opts.EmbedCacheEntries >= 0 {
		ro.Cache = &dbCache{db: db}
	}
	return embed.NewRemote(ro)
}

// missingEmbedder stands for the Go value of a collection created with
// CollectionOptions.TextEmbedder and reopened without it in
// Options.Embedders: every text it is asked to embed fails, saying how to
// give the embedder back (embedTexts wraps the error in ErrEmbedder).
type missingEmbedder struct{ coll string }

func (missingEmbedder) Dim() int { return 0 }

func (e missingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, fmt.Errorf("collection %q was created with a Go embedder (CollectionOptions.TextEmbedder), which is not stored: pass it to Open in Options.Embedders[%q]", e.coll, e.coll)
}

// creatable returns the options CreateCollection logs for collection name:
// Embedder EmbedderCustom when a TextEmbedder is given. A custom embedder
// must be at hand (TextEmbedder or Options.Embedders[name]), and an entry
// of Options.Embedders must not be left unused by a named embedder.
func (db *DB) creatable(name string, opts *CollectionOptions) (CollectionOptions, error) {
	o := *opts
	if o.TextEmbedder != nil {
		o.Embedder = EmbedderCustom
	}
	if o.Embedder == EmbedderCustom && o.TextEmbedder == nil && db.opts.Embedders[name] == nil {
		return o, fmt.Errorf("%w: CollectionOptions.Embedder = %q needs CollectionOptions.TextEmbedder (or Options.Embedders[%q] given to Open)", ErrOptions, EmbedderCustom, name)
	}
	if err := db.checkEmbedder(name, &o); err != nil {
		return o, err
	}
	return o, nil
}

// checkEmbedders checks, after recovery, every entry of
// Options.Embedders against the collection it names, if that exists.
func (db *DB) checkEmbedders() error {
	for _, name := range slices.Sorted(maps.Keys(db.opts.Embedders)) {
		if c := db.lookup(name); c != nil {
			if err := db.checkEmbedder(name, &c.opts); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkEmbedder checks the entry of Options.Embedders for collection
// name, with options o, if there is one: the collection must use it
// (Embedder EmbedderCustom) and its dimension must be the collection's.
func (db *DB) checkEmbedder(name string, o *CollectionOptions) error {
	e := db.opts.Embedders[name]
	switch {
	case e == nil:
	case o.Embedder != EmbedderCustom:
		return fmt.Errorf("%w: Options.Embedders[%q] is given but the collection's embedder is %q, not %q", ErrOptions, name, o.Embedder, EmbedderCustom)
	case e.Dim() != 0 && e.Dim() != o.Dim:
		return fmt.Errorf("%w: Options.Embedders[%q] makes vectors of %d dimensions, the collection's Dim is %d", ErrOptions, name, e.Dim(), o.Dim)
	}
	return nil
}

// dbCache is the DB's file-backed embedding cache, opened at first use
// (an open needs no network, and a DB without remote embedders never
// creates the file).
type dbCache struct{ db *DB }

func (c *dbCache) cache() embed.Cache {
	db := c.db
	db.embMu.Lock()
	defer db.embMu.Unlock()
	if db.embClosed {
		return nil // a Put still embedding when the DB closed
	}
	if db.embCache == nil && db.embErr == nil && db.dir != "" {
		db.embCache, db.embErr = embed.OpenFileCache(filepath.Join(db.dir, embedCacheFile), db.opts.EmbedCacheEntries)
		if db.embErr != nil {
			// A cache that cannot be opened costs money, not data: embed
			// without it, and say why on Close.
			db.embCache = nil
		}
	}
	if db.embCache == nil {
		return nil
	}
	return db.embCache
}

func (c *dbCache) Get(key [32]byte) ([]float32, bool) {
	if fc := c.cache(); fc != nil {
		return fc.Get(key)
	}
	return nil, false
}

func (c *dbCache) Put(key [32]byte, v []float32) {
	if fc := c.cache(); fc != nil {
		fc.Put(key, v)
	}
}

// Delete forgets the vectors of keys in the cache file (a purge: the
// cached vector of a purged text must not outlive it).
func (c *dbCache) Delete(keys ...[32]byte) {
	if fc, ok := c.cache().(interface{ Delete(...[32]byte) int }); ok {
		fc.Delete(keys...)
	}
}

// closeEmbedCache closes the cache file, if one was opened.
func (db *DB) closeEmbedCache() error {
	db.embMu.Lock()
	defer db.embMu.Unlock()
	db.embClosed = true
	var err error
	if db.embErr != nil {
		err = fmt.Errorf("tidemark: the embedding cache could not be opened (remote embeddings were not cached): %w", db.embErr)
	}
	if db.embCache != nil {
		err = errors.Join(err, db.embCache.Close())
		db.embCache = nil
	}
	return err
}

// embedTexts embeds texts with the collection's embedder, checking every
// vector; its errors wrap ErrEmbedder (or ErrDimension for a vector of the
// wrong length).
func (c *Collection) embedTexts(ctx context.Context, texts []string) ([][]float32, error) {
	if c.emb == nil {
		return nil, fmt.Errorf("%w: the collection has no embedder", ErrInvalid)
	}
	vs, err := c.emb.Embed(ctx, texts)
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, err
	case err != nil:
		// A wrong dimension from the model is the collection's
		// configuration, not the caller's input: ErrEmbedder too.
		return nil, fmt.Errorf("%w: embedder %q: %w", ErrEmbedder, c.opts.Embedder, err)
	case len(vs) != len(texts):
		return nil, fmt.Errorf("%w: embedder %q returned %d vectors for %d texts", ErrEmbedder, c.opts.Embedder, len(vs), len(texts))
	}
	for i, v := range vs {
		if err := checkVector(v, c.opts.Dim, fmt.Sprintf("the embedding of text %d", i)); err != nil {
			return nil, fmt.Errorf("%w: embedder %q: %w", ErrEmbedder, c.opts.Embedder, err)
		}
	}
	return vs, nil
}
