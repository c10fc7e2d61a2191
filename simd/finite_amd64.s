//go:build !noasm && amd64

#include "textflag.h"

// func finiteAVX2(v *float32, n int) bool
//
// Over n elements, n a positive multiple of 32: each element ANDed with
// the exponent mask (VPAND) and compared with it (VPCMPEQD gives all ones
// where the exponent is all ones: NaN or ±Inf), the results ORed into two
// accumulators; VPTEST of their OR sets ZF when no element matched.
TEXT ·finiteAVX2(SB), NOSPLIT, $0-17
	MOVQ         v+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVL         $0x7f800000, AX
	MOVQ         AX, X15
	VPBROADCASTD X15, Y15
	VPXOR        Y0, Y0, Y0
	VPXOR        Y1, Y1, Y1

finiteloop:
	VPAND    (SI), Y15, Y4
	VPAND    32(SI), Y15, Y5
	VPAND    64(SI), Y15, Y6
	VPAND    96(SI), Y15, Y7
	VPCMPEQD Y15, Y4, Y4
	VPCMPEQD Y15, Y5, Y5
	VPCMPEQD Y15, Y6, Y6
	VPCMPEQD Y15, Y7, Y7
	VPOR     Y4, Y0, Y0
	VPOR     Y5, Y1, Y1
	VPOR     Y6, Y0, Y0
	VPOR     Y7, Y1, Y1
	ADDQ     $128, SI
	SUBQ     $32, CX
	JNZ      finiteloop

	VPOR    Y1, Y0, Y0
	VPTEST  Y0, Y0
	SETEQ   ret+16(FP)
	VZEROUPPER
	RET
