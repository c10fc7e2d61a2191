//go:build !noasm && amd64

#include "textflag.h"

// HSUMD_Y0 adds the eight int32 lanes of Y0 into the low lane of X0
// (X1 is scratch).
#define HSUMD_Y0 \
	VEXTRACTI128 $1, Y0, X1; \
	VPADDD       X1, X0, X0; \
	VPSHUFD      $0x4E, X0, X1; \
	VPADDD       X1, X0, X0; \
	VPSHUFD      $0xB1, X0, X1; \
	VPADDD       X1, X0, X0

// func dotInt8AVX2(a, b *int8, n int) int32
//
// Per 16 bytes: VPMOVSXBW sign-extends 16 int8 to 16 int16, VPMADDWD
// multiplies the int16 pairs and adds adjacent products into 8 int32
// lanes; two such steps per 32-byte block, two accumulators. n is a
// positive multiple of 32.
TEXT ·dotInt8AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y5, Y5, Y5

loop:
	VPMOVSXBW (SI), Y1
	VPMOVSXBW (DI), Y2
	VPMADDWD  Y2, Y1, Y1
	VPADDD    Y1, Y0, Y0
	VPMOVSXBW 16(SI), Y3
	VPMOVSXBW 16(DI), Y4
	VPMADDWD  Y4, Y3, Y3
	VPADDD    Y3, Y5, Y5
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JNZ       loop

	VPADDD       Y5, Y0, Y0
	HSUMD_Y0
	VMOVD        X0, AX
	MOVL         AX, ret+24(FP)
	VZEROUPPER
	RET

// func dotInt8RowsAVX2(q, rows *int8, stride int, ids *uint32, n int, out *int32)
//
// For each of the n ids: the dotInt8AVX2 loop over q and the row at
// rows + id·stride, the sum stored to out. n ≥ 1, stride a positive
// multiple of 32.
TEXT ·dotInt8RowsAVX2(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ rows+8(FP), R8
	MOVQ stride+16(FP), R9
	MOVQ ids+24(FP), R10
	MOVQ n+32(FP), R11
	MOVQ out+40(FP), R12

row:
	MOVL  (R10), AX
	IMULQ R9, AX
	LEAQ  (R8)(AX*1), DI
	MOVQ  SI, BX
	MOVQ  R9, CX
	VPXOR Y0, Y0, Y0
	VPXOR Y5, Y5, Y5

block:
	VPMOVSXBW (BX), Y1
	VPMOVSXBW (DI), Y2
	VPMADDWD  Y2, Y1, Y1
	VPADDD    Y1, Y0, Y0
	VPMOVSXBW 16(BX), Y3
	VPMOVSXBW 16(DI), Y4
	VPMADDWD  Y4, Y3, Y3
	VPADDD    Y3, Y5, Y5
	ADDQ      $32, BX
	ADDQ      $32, DI
	SUBQ      $32, CX
	JNZ       block

	VPADDD       Y5, Y0, Y0
	HSUMD_Y0
	VMOVD        X0, (R12)
	ADDQ         $4, R10
	ADDQ         $4, R12
	DECQ         R11
	JNZ          row
	VZEROUPPER
	RET

// func dotInt8RowsVNNI(q, rows *int8, stride int, ids *uint32, n int, out *int32)
//
// dotInt8RowsAVX2 with AVX-512 VNNI (on 256-bit registers, AVX512VL):
// VPDPBUSD multiplies 32 unsigned bytes by 32 signed bytes and adds each
// group of four products into an int32 lane, one instruction where the
// AVX2 loop needs a sign extension, a multiply-add and an add per 16
// bytes. The query is made unsigned by adding 128 (XOR 0x80), and
// Σ (q+128)·r − 128·Σ r = Σ q·r, the second sum by VPDPBUSD of ones. The
// lanes wrap modulo 2³², which cancels in the difference: the result is
// exact whenever the true dot fits in an int32 (DotInt8Rows' length
// bound). n ≥ 1, stride a positive multiple of 32.
TEXT ·dotInt8RowsVNNI(SB), NOSPLIT, $0-48
	MOVQ q+0(FP), SI
	MOVQ rows+8(FP), R8
	MOVQ stride+16(FP), R9
	MOVQ ids+24(FP), R10
	MOVQ n+32(FP), R11
	MOVQ out+40(FP), R12
	MOVL $0x80808080, AX
	MOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x01010101, AX
	MOVD AX, X15
	VPBROADCASTD X15, Y15

vrow:
	MOVL  (R10), AX
	IMULQ R9, AX
	LEAQ  (R8)(AX*1), DI
	MOVQ  SI, BX
	MOVQ  R9, CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1

	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	CMPQ  CX, $64
	JLT   vtail

	// 64 bytes a step, two accumulator pairs, so that each VPDPBUSD
	// chain waits on its own last result half as often.
vblock:
	VMOVDQU  (BX), Y2
	VPXOR    Y14, Y2, Y2
	VMOVDQU  (DI), Y3
	VMOVDQU  32(BX), Y6
	VPXOR    Y14, Y6, Y6
	VMOVDQU  32(DI), Y7
	VPDPBUSD Y3, Y2, Y0
	VPDPBUSD Y3, Y15, Y1
	VPDPBUSD Y7, Y6, Y4
	VPDPBUSD Y7, Y15, Y5
	ADDQ     $64, BX
	ADDQ     $64, DI
	SUBQ     $64, CX
	CMPQ     CX, $64
	JGE      vblock

vtail:
	TESTQ    CX, CX
	JZ       vsum
	VMOVDQU  (BX), Y2
	VPXOR    Y14, Y2, Y2
	VMOVDQU  (DI), Y3
	VPDPBUSD Y3, Y2, Y0
	VPDPBUSD Y3, Y15, Y1

vsum:
	VPADDD       Y4, Y0, Y0
	VPADDD       Y5, Y1, Y1
	VPSLLD       $7, Y1, Y1
	VPSUBD       Y1, Y0, Y0
	HSUMD_Y0
	VMOVD        X0, (R12)
	ADDQ         $4, R10
	ADDQ         $4, R12
	DECQ         R11
	JNZ          vrow
	VZEROUPPER
	RET

// func maxAbsAVX2(v *float32, n int) float32
//
// max |v[i]| over n elements, n a positive multiple of 32: the sign bit
// cleared with VANDPS, four VMAXPS accumulators, then a horizontal max.
TEXT ·maxAbsAVX2(SB), NOSPLIT, $0-20
	MOVQ         v+0(FP), SI
	MOVQ         n+8(FP), CX
	MOVQ         $0x7fffffff, AX
	MOVQ         AX, X15
	VPBROADCASTD X15, Y15
	VXORPS       Y0, Y0, Y0
	VXORPS       Y1, Y1, Y1
	VXORPS       Y2, Y2, Y2
	VXORPS       Y3, Y3, Y3

maxloop:
	VANDPS (SI), Y15, Y4
	VANDPS 32(SI), Y15, Y5
	VANDPS 64(SI), Y15, Y6
	VANDPS 96(SI), Y15, Y7
	VMAXPS Y4, Y0, Y0
	VMAXPS Y5, Y1, Y1
	VMAXPS Y6, Y2, Y2
	VMAXPS Y7, Y3, Y3
	ADDQ   $128, SI
	SUBQ   $32, CX
	JNZ    maxloop

	VMAXPS       Y1, Y0, Y0
	VMAXPS       Y3, Y2, Y2
	VMAXPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VMAXPS       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VMAXPS       X1, X0, X0
	VMOVSS       X0, ret+16(FP)
	VZEROUPPER
	RET

// func quantizeAVX2(v *float32, n int, inv float32, dst *int8)
//
// dst[i] = int8(round-to-even(v[i]·inv)) over n elements, n a positive
// multiple of 32, |v[i]·inv| ≤ 127.5: VMULPS then VCVTPS2DQ (which rounds
// by MXCSR, to nearest even as Go leaves it), then saturating packs to
// int16 and int8. The packs interleave 128-bit lanes; VPERMD with the
// index vector 0,4,1,5,2,6,3,7 puts the 32 bytes back in order.
TEXT ·quantizeAVX2(SB), NOSPLIT, $0-32
	MOVQ         v+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS inv+16(FP), Y15
	MOVQ         dst+24(FP), DI
	MOVQ         $0x0000000400000000, AX
	MOVQ         AX, X14
	MOVQ         $0x0000000500000001, AX
	MOVQ         AX, X13
	VPUNPCKLQDQ  X13, X14, X14
	MOVQ         $0x0000000600000002, AX
	MOVQ         AX, X12
	MOVQ         $0x0000000700000003, AX
	MOVQ         AX, X13
	VPUNPCKLQDQ  X13, X12, X12
	VINSERTI128  $1, X12, Y14, Y14

qloop:
	VMULPS    (SI), Y15, Y0
	VMULPS    32(SI), Y15, Y1
	VMULPS    64(SI), Y15, Y2
	VMULPS    96(SI), Y15, Y3
	VCVTPS2DQ Y0, Y0
	VCVTPS2DQ Y1, Y1
	VCVTPS2DQ Y2, Y2
	VCVTPS2DQ Y3, Y3
	VPACKSSDW Y1, Y0, Y0
	VPACKSSDW Y3, Y2, Y2
	VPACKSSWB Y2, Y0, Y0
	VPERMD    Y0, Y14, Y0
	VMOVDQU   Y0, (DI)
	ADDQ      $128, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JNZ       qloop

	VZEROUPPER
	RET
