// tm_abi.h: the structures the Go side (package cuda, abi.go) writes into
// device memory and the kernels read. Every field is 8 bytes (double,
// long long or unsigned long long: device pointers are 64-bit), so the
// layout has no padding and the Go side writes each structure as an array
// of uint64 in field order; abi_test.go parses this file and checks the
// order against Go's.
#ifndef TM_ABI_H
#define TM_ABI_H

// The most queries one tm_fused launch scores (their sums are registers).
#define TM_MAXQ 8

// Float columns of TmCorpus.cols, column c at cols + c·colStride (the
// order of kernels.Batch.floatColumns).
#define TM_COL_CREATED 0
#define TM_COL_VALID_FROM 1
#define TM_COL_VALID_TO 2
#define TM_COL_RECORDED_AT 3
#define TM_COL_RETIRED_AT 4
#define TM_COL_LAMBDA 5
#define TM_COL_FLOOR 6
#define TM_COL_BASE_CONF 7
#define TM_COL_CONF_FROM 8
#define TM_COL_ACCESS 9
#define TM_COL_POSITIVE 10
#define TM_COL_NEGATIVE 11
#define TM_COL_DEGREE 12
#define TM_NCOLS 13

// The corpus resident on the device: n rows, room for colStride.
typedef struct TmCorpus {
  unsigned long long vecs;   // n × dim floats, or bf16 (unsigned short) when bf16 = 1
  unsigned long long cols;   // TM_NCOLS × colStride floats
  unsigned long long kind;   // n bytes (temporal.Kind)
  unsigned long long status; // n bytes (temporal.Status)
  unsigned long long group;  // n unsigned ints (drift group)
  unsigned long long ids;    // n unsigned long longs
  long long n;
  long long dim;
  long long bf16;
  long long colStride;
} TmCorpus;

// The scoring parameters (temporal.Params, flattened).
typedef struct TmParams {
  double wSim;
  double wTime;
  double wConf;
  double wRel;
  long long combine; // temporal.Combine: 0 sum, 1 product, 2 gated
  long long maskExpired;
  long long maskRetired;
  long long ignoreValidity;
  long long normalizeSim;
  long long poolRecency;
  long long adaptive;
  long long pooled; // temporal.Params.Pooled()
  double outOfWindow;
  double eventBoost;
  double eventFloor;
  double eventGateFactor;
  double relevanceThreshold;
  double relevancePenalty;
  double minSim;
  double staleBelow;
  double confLambda; // ln 2 / Confidence.HalfLife
  double alphaPos;
  double alphaNeg;
  double beta;
  double confMin;
  double confMax;
  long long holdStatic;
  long long holdVersioned;
} TmParams;

// One query's time context and, between the passes of pooled parameters,
// its pool statistics.
typedef struct TmQuery {
  double at;
  double txAt;
  double rangeFrom;
  double rangeTo;
  long long hasRange;
  long long kinds;    // bit k allows kind k; 0 allows all
  long long statuses; // bit s allows status s; 0 allows all
  unsigned long long groupLambda; // device pointer to doubles (adaptive decay), or 0
  double minSim;
  double maxSim;
  double minAge;
  double maxAge;
} TmQuery;

// One selected candidate: score descending, then id ascending; index −1
// is no candidate.
typedef struct TmHit {
  double score;
  unsigned long long id;
  long long index;
  double sim;
} TmHit;

#endif
