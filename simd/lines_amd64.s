//go:build !noasm && amd64

#include "textflag.h"

// func aboveLinesAVX512(sims *float32, ld, n int, a, c, thr *float32, masks *uint16)
//
// Per row: a and c broadcast (Z0, Z1); per panel of sixteen queries one
// fused multiply-add of the similarities and one comparison with the
// thresholds into K1, stored as the panel's 16-bit mask. SI sims (a row at
// a time), R8 row stride in bytes, CX rows left, R9 a, R10 c, R11 thr, DI
// masks, R12 panels per row, DX and BX the panel cursors, R13 panels left.
TEXT ·aboveLinesAVX512(SB), NOSPLIT, $0-56
	MOVQ sims+0(FP), SI
	MOVQ ld+8(FP), R8
	MOVQ n+16(FP), CX
	MOVQ a+24(FP), R9
	MOVQ c+32(FP), R10
	MOVQ thr+40(FP), R11
	MOVQ masks+48(FP), DI
	MOVQ R8, R12
	SHRQ $4, R12
	SHLQ $2, R8

row512:
	VBROADCASTSS (R9), Z0
	VBROADCASTSS (R10), Z1
	MOVQ         SI, DX
	MOVQ         R11, BX
	MOVQ         R12, R13

panel512:
	VMOVUPS     (DX), Z2
	VFMADD213PS Z1, Z0, Z2
	VCMPPS      $0x1d, (BX), Z2, K1
	KMOVW       K1, AX
	MOVW        AX, (DI)
	ADDQ        $64, DX
	ADDQ        $64, BX
	ADDQ        $2, DI
	DECQ        R13
	JNZ         panel512

	ADDQ $4, R9
	ADDQ $4, R10
	ADDQ R8, SI
	DECQ CX
	JNZ  row512
	VZEROUPPER
	RET

// func aboveLinesAVX2(sims *float32, ld, n int, a, c, thr *float32, masks *uint16)
//
// aboveLinesAVX512 on 256-bit registers: each panel is two halves whose
// sign masks (VMOVMSKPS) make the low and high bytes of its mask; R12 is
// scratch, R13 counts the panels from the row stride.
TEXT ·aboveLinesAVX2(SB), NOSPLIT, $0-56
	MOVQ sims+0(FP), SI
	MOVQ ld+8(FP), R8
	MOVQ n+16(FP), CX
	MOVQ a+24(FP), R9
	MOVQ c+32(FP), R10
	MOVQ thr+40(FP), R11
	MOVQ masks+48(FP), DI
	SHLQ $2, R8

row256:
	VBROADCASTSS (R9), Y0
	VBROADCASTSS (R10), Y1
	MOVQ         SI, DX
	MOVQ         R11, BX
	MOVQ         R8, R13
	SHRQ         $6, R13

panel256:
	VMOVUPS     (DX), Y2
	VMOVUPS     32(DX), Y3
	VFMADD213PS Y1, Y0, Y2
	VFMADD213PS Y1, Y0, Y3
	VCMPPS      $0x1d, (BX), Y2, Y2
	VCMPPS      $0x1d, 32(BX), Y3, Y3
	VMOVMSKPS   Y2, AX
	VMOVMSKPS   Y3, R12
	SHLL        $8, R12
	ORL         R12, AX
	MOVW        AX, (DI)
	ADDQ        $64, DX
	ADDQ        $64, BX
	ADDQ        $2, DI
	DECQ        R13
	JNZ         panel256

	ADDQ $4, R9
	ADDQ $4, R10
	ADDQ R8, SI
	DECQ CX
	JNZ  row256
	VZEROUPPER
	RET
