// tidemark.cu: the fused stage on a CUDA device. The same source is
// compiled twice: to PTX by clang (prelude.h stands in for the CUDA
// headers; go generate ./cuda), and for the host by the tests' fake
// libcuda.so.1, whose SIMT emulation (../emu/simt.h) runs every thread of
// a block as a real thread. The scoring arithmetic mirrors package
// kernels' epilogue (kernels/fused.go) line for line, in double precision
// over the float32 columns: the masks of temporal.Mask, the decay and
// validity signal of SmartVector §4 and the article, VDD's drift-adaptive
// λ, the ConfidenceEngine of SmartVector §5 and the relational bonus.
#ifndef TM_EMULATION
#include "prelude.h"
#endif
#include "tm_abi.h"

// Reason codes (temporal.Reason; abi_test.go checks them).
#define TM_REASON_NONE 0
#define TM_REASON_NOT_YET_RECORDED 1
#define TM_REASON_SUPERSEDED 2
#define TM_REASON_FILTERED_KIND 3
#define TM_REASON_FILTERED_STATUS 4
#define TM_REASON_NOT_YET_VALID 5
#define TM_REASON_EXPIRED_STATIC 6
#define TM_REASON_EXPIRED_VERSIONED 7
#define TM_REASON_EXPIRED_EVENT 8
#define TM_REASON_OUT_OF_TIME_RANGE 9
#define TM_REASON_BELOW_RELEVANCE_GATE 10
#define TM_REASON_STALE_STATIC 11
#define TM_REASON_STALE 12

// Kinds (temporal.Kind) and combinations (temporal.Combine).
#define TM_KIND_STATIC 0
#define TM_KIND_VERSIONED 1
#define TM_KIND_EVENT 2
#define TM_COMBINE_SUM 0
#define TM_COMBINE_PRODUCT 1
#define TM_COMBINE_GATED 2

// The passes of tm_fused.
#define TM_PASS_FUSED 0 // dot, masks, score
#define TM_PASS_POOL1 1 // dot, masks, pool statistics
#define TM_PASS_POOL2 2 // score the stored similarities

#define TM_INF __builtin_inf()
#define TM_NAN __builtin_nan("")

__device__ static inline double tm_max(double a, double b) { return a > b ? a : b; }
__device__ static inline double tm_min(double a, double b) { return a < b ? a : b; }

// 2^k for k in [−1074, 1023], from the bits of a double (two factors where
// one would leave the normal range).
__device__ static inline double tm_pow2(int k) {
  if (k < -1022) {
    return tm_pow2(k + 1022) * tm_pow2(-1022);
  }
  unsigned long long bits = (unsigned long long)(k + 1023) << 52;
  return __longlong_as_double((long long)bits);
}

// tm_exp is exp(x) to within an ulp or two, with no library: PTX has no
// double-precision exponential, clang's -nocudalib leaves out libdevice,
// and the emulation must run the same arithmetic. x = k·ln 2 + r with
// |r| ≤ ln 2 / 2 (ln 2 split in two so k·ln2_hi is exact), exp(r) by its
// Taylor series to r^13/13! (a relative error under 2e-16 there).
__device__ static double tm_exp(double x) {
  if (x != x) return x;
  if (x > 709.782712893384) return TM_INF;
  if (x < -745.1332191019412) return 0.0;
  const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  const double inv_ln2 = 1.44269504088896338700e+00;
  double kf = x * inv_ln2;
  int k = (int)(kf < 0 ? kf - 0.5 : kf + 0.5);
  double r = (x - k * ln2_hi) - k * ln2_lo;
  double t = 1.0 / 6227020800.0; // 1/13!
  const double inv_fact[13] = {1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
                               1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0,
                               1.0 / 6.0, 0.5, 1.0, 1.0};
  for (int i = 0; i < 13; i++) t = t * r + inv_fact[i];
  if (k > 1023) return t * tm_pow2(1023) * tm_pow2(k - 1023);
  return t * tm_pow2(k);
}

// tm_log is ln(y) for y > 0: y = m·2^e with m in [√½, √2), ln m =
// 2·atanh(s) with s = (m − 1)/(m + 1), |s| ≤ 0.172, by its series to s^23.
__device__ static double tm_log(double y) {
  if (!(y > 0)) return y == 0 ? -TM_INF : TM_NAN;
  if (y == TM_INF) return y;
  long long bits = __double_as_longlong(y);
  int e = (int)((bits >> 52) & 0x7ff);
  if (e == 0) { // subnormal: scale into the normal range first
    return tm_log(y * tm_pow2(54)) - 54 * 6.93147180559945309417e-01;
  }
  e -= 1023;
  double m = __longlong_as_double((bits & 0x000fffffffffffffLL) | 0x3ff0000000000000LL);
  if (m > 1.4142135623730951) {
    m *= 0.5;
    e++;
  }
  double s = (m - 1) / (m + 1), s2 = s * s, sum = 0;
  for (int n = 23; n >= 1; n -= 2) sum = sum * s2 + 1.0 / n;
  const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  return e * ln2_hi + (2 * s * sum + e * ln2_lo);
}

// ln(1 + x) of a counter (accesses, links): integers, so 1 + x is exact
// below 2^53 and ln of it is log1p to rounding (kernels.log1pCount).
__device__ static inline double tm_log1p_count(double x) { return tm_log(1.0 + x); }

__device__ static inline float tm_col(const TmCorpus* c, int col, long long i) {
  return ((const float*)c->cols)[col * c->colStride + i];
}

__device__ static inline double tm_age(const TmCorpus* c, const TmQuery* q, long long i) {
  return tm_max(0.0, q->at - (double)tm_col(c, TM_COL_CREATED, i));
}

__device__ static inline double tm_decay(const TmCorpus* c, const TmParams* p, const TmQuery* q, long long i, double age) {
  double l = (double)tm_col(c, TM_COL_LAMBDA, i);
  if (p->adaptive) {
    l = ((const double*)q->groupLambda)[((const unsigned*)c->group)[i]];
  }
  return tm_max((double)tm_col(c, TM_COL_FLOOR, i), tm_exp(-l * age));
}

__device__ static inline int tm_open_window(double from, double to) {
  return from == -TM_INF && to == TM_INF;
}

// tm_premask is every mask that needs no similarity (kernels' premask).
__device__ static int tm_premask(const TmCorpus* c, const TmParams* p, const TmQuery* q, long long i) {
  int kind = ((const unsigned char*)c->kind)[i];
  int status = ((const unsigned char*)c->status)[i];
  if (p->maskRetired) {
    if (q->txAt < (double)tm_col(c, TM_COL_RECORDED_AT, i)) return TM_REASON_NOT_YET_RECORDED;
    if (q->txAt >= (double)tm_col(c, TM_COL_RETIRED_AT, i)) return TM_REASON_SUPERSEDED;
  }
  if (q->kinds != 0 && !(q->kinds & (1LL << kind))) return TM_REASON_FILTERED_KIND;
  if (q->statuses != 0 && !(q->statuses & (1LL << status))) return TM_REASON_FILTERED_STATUS;
  double from = tm_col(c, TM_COL_VALID_FROM, i), to = tm_col(c, TM_COL_VALID_TO, i);
  if (p->maskExpired && !(q->at >= from && q->at < to) && !tm_open_window(from, to)) {
    if (q->at < from) return TM_REASON_NOT_YET_VALID;
    if (kind == TM_KIND_EVENT) return TM_REASON_EXPIRED_EVENT;
    if (kind == TM_KIND_VERSIONED) return TM_REASON_EXPIRED_VERSIONED;
    return TM_REASON_EXPIRED_STATIC;
  }
  if (q->hasRange) {
    double created = tm_col(c, TM_COL_CREATED, i);
    if (!(created >= q->rangeFrom && created < q->rangeTo)) return TM_REASON_OUT_OF_TIME_RANGE;
  }
  return TM_REASON_NONE;
}

// tm_postmask applies the masks that need the similarity or the decay.
__device__ static int tm_postmask(const TmCorpus* c, const TmParams* p, const TmQuery* q, long long i, double sim) {
  if (p->minSim > 0 && sim < p->minSim) return TM_REASON_BELOW_RELEVANCE_GATE;
  if (p->staleBelow > 0 && tm_decay(c, p, q, i, tm_age(c, q, i)) < p->staleBelow) {
    return ((const unsigned char*)c->kind)[i] == TM_KIND_STATIC ? TM_REASON_STALE_STATIC : TM_REASON_STALE;
  }
  return TM_REASON_NONE;
}

// tm_score is a kept row's score (kernels' epilogue.signals without the
// explanation).
__device__ static double tm_score(const TmCorpus* c, const TmParams* p, const TmQuery* q, long long i, double sim) {
  int kind = ((const unsigned char*)c->kind)[i];
  double age = tm_age(c, q, i);
  double decay = tm_decay(c, p, q, i, age), recency = 1, simNorm = 1, penalty = 1;
  if (p->pooled) {
    simNorm = q->maxSim > q->minSim ? (sim - q->minSim) / (q->maxSim - q->minSim) : 1;
    if (p->poolRecency && q->maxAge != q->minAge) {
      recency = 1 - (age - q->minAge) / (q->maxAge - q->minAge);
    }
  }
  double from = tm_col(c, TM_COL_VALID_FROM, i), to = tm_col(c, TM_COL_VALID_TO, i);
  double temporal;
  if (!tm_open_window(from, to) && !(q->at >= from && q->at < to)) {
    temporal = p->ignoreValidity ? decay * recency : p->outOfWindow;
  } else if (!tm_open_window(from, to) && kind == TM_KIND_EVENT) {
    double gate = (p->eventFloor > 0 && sim < p->eventFloor) ? p->eventGateFactor : 1.0;
    temporal = decay * recency * p->eventBoost * gate;
  } else {
    temporal = decay * recency;
  }
  double conf = 0, rel = 0;
  if (p->wConf != 0 && p->combine != TM_COMBINE_PRODUCT) {
    double cage = q->at - (double)tm_col(c, TM_COL_CONF_FROM, i);
    if ((p->holdVersioned && kind == TM_KIND_VERSIONED) || (p->holdStatic && kind == TM_KIND_STATIC)) cage = 0;
    double decayed = (double)tm_col(c, TM_COL_BASE_CONF, i) * tm_max(0.0, tm_exp(-p->confLambda * tm_max(0.0, cage)));
    double fb = tm_min(p->confMax, tm_max(p->confMin, decayed + p->alphaPos * (double)tm_col(c, TM_COL_POSITIVE, i) -
                                                          p->alphaNeg * (double)tm_col(c, TM_COL_NEGATIVE, i)));
    conf = tm_min(p->confMax, fb + p->beta * tm_log1p_count((double)tm_col(c, TM_COL_ACCESS, i)));
  }
  if (p->wRel != 0 && p->combine != TM_COMBINE_PRODUCT) {
    double d = tm_col(c, TM_COL_DEGREE, i);
    if (d > 0) rel = tm_min(0.3, 0.1 * tm_log1p_count(d));
  }
  if (p->relevanceThreshold > 0 && simNorm < p->relevanceThreshold) penalty = p->relevancePenalty;
  double x = p->normalizeSim ? simNorm : sim;
  if (p->combine == TM_COMBINE_PRODUCT) return penalty * x * temporal;
  if (p->combine == TM_COMBINE_GATED) return penalty * x * (p->wSim + p->wTime * temporal + p->wConf * conf + p->wRel * rel);
  return penalty * (p->wSim * x + p->wTime * temporal + p->wConf * conf + p->wRel * rel);
}

__device__ static inline float tm_elem(const TmCorpus* c, long long i, long long k) {
  if (c->bf16) {
    unsigned short h = ((const unsigned short*)c->vecs)[i * c->dim + k];
    return __uint_as_float((unsigned)h << 16);
  }
  return ((const float*)c->vecs)[i * c->dim + k];
}

// TM_MAX_WARPS bounds the warps of a block (512 threads): the shared
// arrays below are sized by it.
#define TM_MAX_WARPS 16

// tm_fused scores rows [row0, row0 + nrows) for nq ≤ TM_MAXQ queries
// (unit vectors qv, nq × dim), one warp per row, rows strided over the
// grid's warps. Outputs are query-major, nrows per query: sims, reasons,
// and scores (NaN for a removed row). The warp's 32 lanes stride over the
// dimensions with one float32 running sum per query; the lanes' partial
// sums meet in shared memory, and lane j adds query j's 32 of them and
// runs its masks and score in double — the queries' epilogues in
// parallel, two warp barriers per row whatever the number of queries.
//
// pass TM_PASS_FUSED: dot, masks, score. TM_PASS_POOL1: dot and masks,
// and each block's pool statistics over its kept rows into stats
// (blockIdx.x·nq + j)·4 + {min sim, max sim, min age, max age}; the host
// reduces them into TmQuery. TM_PASS_POOL2: the stored sims and reasons
// scored.
extern "C" __global__ void __launch_bounds__(TM_MAX_WARPS * 32) tm_fused(const TmCorpus* c, const TmParams* p, const TmQuery* qs, const float* qv, int nq,
                                    int pass, long long row0, long long nrows, float* sims, double* scores,
                                    unsigned char* reasons, double* stats) {
  __shared__ float s_part[TM_MAX_WARPS][TM_MAXQ][33]; // padded: lanes write different banks
  __shared__ double s_stats[TM_MAX_WARPS][TM_MAXQ][4];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const long long dim = c->dim;
  const int j = lane; // the query this lane finishes
  const TmQuery* q = &qs[j < nq ? j : 0];
  double st[4] = {TM_INF, -TM_INF, TM_INF, -TM_INF};
  for (long long r = (long long)blockIdx.x * warps + warp; r < nrows; r += (long long)gridDim.x * warps) {
    const long long i = row0 + r;
    const long long o = (long long)j * nrows + r;
    if (pass == TM_PASS_POOL2) {
      if (j < nq) scores[o] = reasons[o] == TM_REASON_NONE ? tm_score(c, p, q, i, (double)sims[o]) : TM_NAN;
      continue;
    }
    // Loops over the compile-time TM_MAXQ, unrolled with the query test
    // inside, keep acc in registers (a run-time bound would put it in
    // local memory).
    float acc[TM_MAXQ];
#pragma unroll
    for (int u = 0; u < TM_MAXQ; u++) acc[u] = 0;
    for (long long k = lane; k < dim; k += 32) {
      float x = tm_elem(c, i, k);
#pragma unroll
      for (int u = 0; u < TM_MAXQ; u++) {
        if (u < nq) acc[u] = fmaf(x, qv[u * dim + k], acc[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < TM_MAXQ; u++) {
      if (u < nq) s_part[warp][u][lane] = acc[u];
    }
    __syncwarp();
    if (j < nq) {
      float sum = 0;
      for (int l = 0; l < 32; l++) sum += s_part[warp][j][l];
      double sim = sum;
      int reason = tm_premask(c, p, q, i);
      if (reason == TM_REASON_NONE) reason = tm_postmask(c, p, q, i, sim);
      sims[o] = sum;
      reasons[o] = (unsigned char)reason;
      if (pass == TM_PASS_FUSED) {
        scores[o] = reason == TM_REASON_NONE ? tm_score(c, p, q, i, sim) : TM_NAN;
      } else if (reason == TM_REASON_NONE) {
        double age = tm_age(c, q, i);
        st[0] = tm_min(st[0], sim);
        st[1] = tm_max(st[1], sim);
        st[2] = tm_min(st[2], age);
        st[3] = tm_max(st[3], age);
      }
    }
    // The partial sums are read before the next row overwrites them.
    __syncwarp();
  }
  if (pass != TM_PASS_POOL1) return;
  if (j < nq) {
    for (int s = 0; s < 4; s++) s_stats[warp][j][s] = st[s];
  }
  __syncthreads();
  if (threadIdx.x < nq) {
    const int u = threadIdx.x;
    double m[4] = {TM_INF, -TM_INF, TM_INF, -TM_INF};
    for (int w = 0; w < warps; w++) {
      m[0] = tm_min(m[0], s_stats[w][u][0]);
      m[1] = tm_max(m[1], s_stats[w][u][1]);
      m[2] = tm_min(m[2], s_stats[w][u][2]);
      m[3] = tm_max(m[3], s_stats[w][u][3]);
    }
    for (int s = 0; s < 4; s++) stats[((long long)blockIdx.x * nq + u) * 4 + s] = m[s];
  }
}

// The batched kernel's tile: TM_TILE_ROWS rows × TM_TILE_QUERIES queries,
// staged TM_TILE_K columns at a time.
#define TM_TILE_ROWS 32
#define TM_TILE_QUERIES 16
#define TM_TILE_K 32
#define TM_TILE_PAIRS (TM_TILE_ROWS * TM_TILE_QUERIES)

// tm_tile is TM_PASS_FUSED for many queries as a tiled product: each block
// takes tiles of 32 rows (strided over the grid) against up to 16 queries;
// per step, 32 columns of the tile's rows and of the queries are staged in
// shared memory by coalesced loads, and each thread accumulates its
// (row, query) pairs from there — every row element read from global
// memory once per 16 queries, not once per query. The epilogue (masks,
// signals, score in double) runs per pair on the accumulated similarity.
// Outputs as tm_fused's. blockDim.x must be a multiple of 32.
extern "C" __global__ void __launch_bounds__(TM_MAX_WARPS * 32) tm_tile(const TmCorpus* c, const TmParams* p, const TmQuery* qs, const float* qv, int nq,
                                   long long row0, long long nrows, float* sims, double* scores,
                                   unsigned char* reasons) {
  __shared__ float s_rows[TM_TILE_ROWS][TM_TILE_K + 1]; // padded: a warp reads 32 rows, 32 banks
  __shared__ float s_q[TM_TILE_QUERIES][TM_TILE_K + 1];
  const long long dim = c->dim;
  const int per = (TM_TILE_PAIRS + blockDim.x - 1) / blockDim.x; // pairs per thread, ≤ 16
  for (long long t0 = (long long)blockIdx.x * TM_TILE_ROWS; t0 < nrows; t0 += (long long)gridDim.x * TM_TILE_ROWS) {
    float acc[TM_TILE_PAIRS / 32];
#pragma unroll
    for (int m = 0; m < TM_TILE_PAIRS / 32; m++) acc[m] = 0;
    for (long long k0 = 0; k0 < dim; k0 += TM_TILE_K) {
      for (int u = threadIdx.x; u < TM_TILE_ROWS * TM_TILE_K; u += blockDim.x) {
        const int rr = u / TM_TILE_K, kk = u % TM_TILE_K;
        const long long r = t0 + rr, k = k0 + kk;
        s_rows[rr][kk] = (r < nrows && k < dim) ? tm_elem(c, row0 + r, k) : 0.0f;
      }
      for (int u = threadIdx.x; u < TM_TILE_QUERIES * TM_TILE_K; u += blockDim.x) {
        const int qq = u / TM_TILE_K, kk = u % TM_TILE_K;
        const long long k = k0 + kk;
        s_q[qq][kk] = (qq < nq && k < dim) ? qv[qq * dim + k] : 0.0f;
      }
      __syncthreads();
      // Each step's 32 products are summed apart and then added: the
      // error grows with the steps, not with every column.
#pragma unroll
      for (int m = 0; m < TM_TILE_PAIRS / 32; m++) {
        const int pr = threadIdx.x + m * blockDim.x;
        if (m >= per || pr >= TM_TILE_PAIRS) continue;
        const int rr = pr % TM_TILE_ROWS, qq = pr / TM_TILE_ROWS;
        float a = 0;
        for (int kk = 0; kk < TM_TILE_K; kk++) a = fmaf(s_rows[rr][kk], s_q[qq][kk], a);
        acc[m] += a;
      }
      // The next step's loads wait until every thread has read this one.
      __syncthreads();
    }
#pragma unroll
    for (int m = 0; m < TM_TILE_PAIRS / 32; m++) {
      const int pr = threadIdx.x + m * blockDim.x;
      if (m >= per || pr >= TM_TILE_PAIRS) continue;
      const int rr = pr % TM_TILE_ROWS, qq = pr / TM_TILE_ROWS;
      const long long r = t0 + rr, i = row0 + r;
      if (r >= nrows || qq >= nq) continue;
      const TmQuery* q = &qs[qq];
      const long long o = (long long)qq * nrows + r;
      const double sim = acc[m];
      int reason = tm_premask(c, p, q, i);
      if (reason == TM_REASON_NONE) reason = tm_postmask(c, p, q, i, sim);
      sims[o] = acc[m];
      reasons[o] = (unsigned char)reason;
      scores[o] = reason == TM_REASON_NONE ? tm_score(c, p, q, i, sim) : TM_NAN;
    }
  }
}

// tm_better is the ranking order: higher score, then lower id (package
// kernels' order), then lower row index — a batch may hold several rows
// with one id (the engine's beliefs of one memory), and the selection's
// strict order must not lose one of two rows with equal score and id.
__device__ static inline int tm_better(double as, unsigned long long aid, long long ai, double bs,
                                      unsigned long long bid, long long bi) {
  if (as != bs) return as > bs;
  if (aid != bid) return aid < bid;
  return ai < bi;
}

// tm_block_best reduces each thread's candidate to the block's best
// (every thread gets it): the candidates meet in shared memory and thread
// 0 takes the best — two barriers a round. A thread without a candidate
// passes index −1, which never wins against one.
__device__ static void tm_block_best(TmHit* h) {
  __shared__ TmHit s_hit[TM_MAX_WARPS * 32];
  __shared__ TmHit s_best;
  s_hit[threadIdx.x] = *h;
  __syncthreads();
  if (threadIdx.x == 0) {
    TmHit b = s_hit[0];
    for (int t = 1; t < (int)blockDim.x; t++) {
      const TmHit* c = &s_hit[t];
      if (c->index >= 0 && (b.index < 0 || tm_better(c->score, c->id, c->index, b.score, b.id, b.index))) b = *c;
    }
    s_best = b;
  }
  __syncthreads();
  // Every thread reads s_best before any reaches the next round's first
  // barrier, after which thread 0 writes it again.
  *h = s_best;
}

// tm_offer makes (s, id, index, sim) the thread's candidate h when it is
// strictly worse than last (the round's predecessor; index −1: none yet)
// and better than h.
__device__ static inline void tm_offer(const TmHit* last, TmHit* h, double s, unsigned long long id, long long index,
                                       double sim) {
  if (last->index >= 0 && !tm_better(last->score, last->id, last->index, s, id, index)) return;
  if (h->index < 0 || tm_better(s, id, index, h->score, h->id, h->index)) {
    h->score = s;
    h->id = id;
    h->index = index;
    h->sim = sim;
  }
}

// tm_rounds writes the k best candidates to dst: k rounds, each taking the
// best candidate strictly worse than the last one taken (offer(last, &h)
// gives the thread's) — the ranking, with the row index last, is a strict
// order, so nothing is taken twice and nothing needs marking. Rounds past
// the last candidate leave index −1.
template <class Offer>
__device__ static void tm_rounds(int k, TmHit* dst, const Offer& offer) {
  TmHit last;
  last.score = TM_INF;
  last.id = 0;
  last.index = -1;
  last.sim = 0;
  for (int t = 0; t < k; t++) {
    TmHit h;
    h.score = 0;
    h.id = 0;
    h.index = -1;
    h.sim = 0;
    offer(&last, &h);
    tm_block_best(&h);
    if (threadIdx.x == 0) dst[t] = h;
    if (h.index < 0) {
      for (int u = t + 1 + (int)threadIdx.x; u < k; u += blockDim.x) dst[u] = h;
      return;
    }
    last = h;
  }
}

// tmSelectOffer offers a thread's rows of one query's chunk; removed rows
// (NaN scores) never enter.
struct tmSelectOffer {
  const double* scores;
  const float* sims;
  const unsigned long long* ids;
  long long row0, lo, hi;
  __device__ void operator()(const TmHit* last, TmHit* h) const {
    for (long long r = lo + threadIdx.x; r < hi; r += blockDim.x) {
      const double s = scores[r];
      if (s == s) tm_offer(last, h, s, ids[row0 + r], row0 + r, sims[r]);
    }
  }
};

// tm_select keeps the k best rows of a chunk of one query's scores (grid:
// chunks × queries) by tm_rounds: out[(query·chunks + chunk)·k + t]. When
// counts is not null the chunk's reason codes are added to
// counts[query·16 + reason] first (in shared memory, then once per block
// to the global counters).
extern "C" __global__ void __launch_bounds__(TM_MAX_WARPS * 32)
    tm_select(const double* scores, const float* sims, const unsigned char* reasons, const unsigned long long* ids,
              long long row0, long long nrows, int k, long long chunk, TmHit* out, unsigned* counts) {
  __shared__ unsigned s_count[16];
  const long long j = blockIdx.y, lo = (long long)blockIdx.x * chunk;
  const long long hi = lo + chunk < nrows ? lo + chunk : nrows;
  if (counts != 0) {
    if (threadIdx.x < 16) s_count[threadIdx.x] = 0;
    __syncthreads();
    for (long long r = lo + threadIdx.x; r < hi; r += blockDim.x) atomicAdd(&s_count[reasons[j * nrows + r] & 15], 1u);
    __syncthreads();
    if (threadIdx.x < 16 && s_count[threadIdx.x] != 0) atomicAdd(&counts[j * 16 + threadIdx.x], s_count[threadIdx.x]);
  }
  const tmSelectOffer offer = {scores + j * nrows, sims + j * nrows, ids, row0, lo, hi};
  tm_rounds(k, out + ((long long)j * gridDim.x + blockIdx.x) * k, offer);
}

// tmMergeOffer offers a thread's share of one query's candidates.
struct tmMergeOffer {
  const TmHit* src;
  int m;
  __device__ void operator()(const TmHit* last, TmHit* h) const {
    for (int u = threadIdx.x; u < m; u += blockDim.x) {
      const TmHit c = src[u];
      if (c.index >= 0) tm_offer(last, h, c.score, c.id, c.index, c.sim);
    }
  }
};

// tm_merge keeps the k best of each query's m candidates (grid: queries)
// by tm_rounds: out[query·k + t].
extern "C" __global__ void __launch_bounds__(TM_MAX_WARPS * 32) tm_merge(const TmHit* in, int m, int k, TmHit* out) {
  const tmMergeOffer offer = {in + (long long)blockIdx.x * m, m};
  tm_rounds(k, out + (long long)blockIdx.x * k, offer);
}

#define TM_KERNEL_LIST(X) X(tm_fused) X(tm_tile) X(tm_select) X(tm_merge)
