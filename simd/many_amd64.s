//go:build !noasm && amd64

#include "textflag.h"

// HSUM4 adds the eight lanes of each of a, b, c, d (Y0…Y15, all
// clobbered) and leaves [Σa, Σb, Σc, Σd] in xa, the low half of a; xb is
// the low half of b, dead by then and used as scratch.
#define HSUM4(a, b, c, d, xa, xb) \
	VHADDPS      b, a, a;   \
	VHADDPS      d, c, c;   \
	VHADDPS      c, a, a;   \
	VEXTRACTF128 $1, a, xb; \
	VADDPS       xb, xa, xa

// QFMA3 loads one query's columns from src into q and adds their products
// with three rows' (r0, r1, r2) to the accumulators a0, a1, a2.
#define QFMA3(src, q, r0, r1, r2, a0, a1, a2) \
	VMOVUPS     src, q;     \
	VFMADD231PS q, r0, a0;  \
	VFMADD231PS q, r1, a1;  \
	VFMADD231PS q, r2, a2

// STORE4 writes the four sums of xa to out[0], out[ldo], out[2·ldo],
// out[3·ldo] (DI = out, BX = ldo bytes, DX = 3·ldo bytes).
#define STORE4(xa) \
	VMOVSS     xa, (DI);         \
	VEXTRACTPS $1, xa, (DI)(BX*1); \
	VEXTRACTPS $2, xa, (DI)(BX*2); \
	VEXTRACTPS $3, xa, (DI)(DX*1)

// func dotTile3x4(rows, qs *float32, dim, n8 int, out *float32, ldo int)
//
// Rows r0, r1, r2 (SI, R8, R10) and queries q0…q3 (R9, R11, R12, R13);
// accumulator Y(4·r+q) holds eight partial sums of row r · query q. Per
// eight columns: three row loads, four query loads, twelve independent
// FMAs — the FMA units, not the loads, set the pace.
TEXT ·dotTile3x4(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), SI
	MOVQ qs+8(FP), R9
	MOVQ dim+16(FP), DX
	MOVQ n8+24(FP), CX
	MOVQ out+32(FP), DI
	MOVQ ldo+40(FP), BX
	SHLQ $2, DX
	SHLQ $2, CX
	SHLQ $2, BX
	LEAQ (SI)(DX*1), R8
	LEAQ (R8)(DX*1), R10
	LEAQ (R9)(DX*1), R11
	LEAQ (R11)(DX*1), R12
	LEAQ (R12)(DX*1), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	XORQ AX, AX

loop3:
	VMOVUPS     (SI)(AX*1), Y12
	VMOVUPS     (R8)(AX*1), Y13
	VMOVUPS     (R10)(AX*1), Y14
	QFMA3((R9)(AX*1), Y15, Y12, Y13, Y14, Y0, Y4, Y8)
	QFMA3((R11)(AX*1), Y15, Y12, Y13, Y14, Y1, Y5, Y9)
	QFMA3((R12)(AX*1), Y15, Y12, Y13, Y14, Y2, Y6, Y10)
	QFMA3((R13)(AX*1), Y15, Y12, Y13, Y14, Y3, Y7, Y11)
	ADDQ        $32, AX
	CMPQ        AX, CX
	JNE         loop3

	LEAQ (BX)(BX*2), DX
	HSUM4(Y0, Y1, Y2, Y3, X0, X1)
	STORE4(X0)
	HSUM4(Y4, Y5, Y6, Y7, X4, X5)
	ADDQ $4, DI
	STORE4(X4)
	HSUM4(Y8, Y9, Y10, Y11, X8, X9)
	ADDQ $4, DI
	STORE4(X8)
	VZEROUPPER
	RET

// func dotTile1x4(rows, qs *float32, dim, n8 int, out *float32, ldo int)
//
// dotTile3x4 for one row (SI); two accumulators per query (Y0…Y3 even
// eight-column steps, Y4…Y7 odd ones) keep eight FMAs in flight.
TEXT ·dotTile1x4(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), SI
	MOVQ qs+8(FP), R9
	MOVQ dim+16(FP), DX
	MOVQ n8+24(FP), CX
	MOVQ out+32(FP), DI
	MOVQ ldo+40(FP), BX
	SHLQ $2, DX
	SHLQ $2, CX
	SHLQ $2, BX
	LEAQ (R9)(DX*1), R11
	LEAQ (R11)(DX*1), R12
	LEAQ (R12)(DX*1), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	XORQ AX, AX
	// An odd number of eight-column steps: do one first, then pairs.
	TESTQ $32, CX
	JZ    pairs1
	VMOVUPS     (SI), Y12
	VFMADD231PS (R9), Y12, Y0
	VFMADD231PS (R11), Y12, Y1
	VFMADD231PS (R12), Y12, Y2
	VFMADD231PS (R13), Y12, Y3
	MOVQ        $32, AX
	CMPQ        AX, CX
	JEQ         done1

pairs1:
	VMOVUPS     (SI)(AX*1), Y12
	VMOVUPS     32(SI)(AX*1), Y13
	VFMADD231PS (R9)(AX*1), Y12, Y0
	VFMADD231PS (R11)(AX*1), Y12, Y1
	VFMADD231PS (R12)(AX*1), Y12, Y2
	VFMADD231PS (R13)(AX*1), Y12, Y3
	VFMADD231PS 32(R9)(AX*1), Y13, Y4
	VFMADD231PS 32(R11)(AX*1), Y13, Y5
	VFMADD231PS 32(R12)(AX*1), Y13, Y6
	VFMADD231PS 32(R13)(AX*1), Y13, Y7
	ADDQ        $64, AX
	CMPQ        AX, CX
	JNE         pairs1

done1:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	LEAQ   (BX)(BX*2), DX
	HSUM4(Y0, Y1, Y2, Y3, X0, X1)
	STORE4(X0)
	VZEROUPPER
	RET

// FOLD512 adds the upper 256 bits of z into its lower half y (Y28 is
// scratch).
#define FOLD512(z, y) \
	VEXTRACTF64X4 $1, z, Y28; \
	VADDPS        Y28, y, y

// ZERO8Z clears eight Z registers.
#define ZERO8Z(a, b, c, d, e, f, g, h) \
	VPXORD a, a, a; VPXORD b, b, b; VPXORD c, c, c; VPXORD d, d, d; \
	VPXORD e, e, e; VPXORD f, f, f; VPXORD g, g, g; VPXORD h, h, h

// FOLD8 folds eight accumulators (FOLD512) into their lower halves.
#define FOLD8(za, ya, zb, yb, zc, yc, zd, yd, ze, ye, zf, yf, zg, yg, zh, yh) \
	FOLD512(za, ya); FOLD512(zb, yb); FOLD512(zc, yc); FOLD512(zd, yd); \
	FOLD512(ze, ye); FOLD512(zf, yf); FOLD512(zg, yg); FOLD512(zh, yh)

// QUERIES8 points R9, R10…R13, BX, CX, DX at the ends of the first n16
// columns of eight queries (R9 the first, DX the stride in bytes, AX
// n16·4 bytes) and negates AX, the loop's counter up to 0.
#define QUERIES8 \
	LEAQ (R9)(DX*1), R10; \
	LEAQ (R10)(DX*1), R11; \
	LEAQ (R11)(DX*1), R12; \
	LEAQ (R12)(DX*1), R13; \
	LEAQ (R13)(DX*1), BX; \
	LEAQ (BX)(DX*1), CX; \
	LEAQ (CX)(DX*1), DX; \
	ADDQ AX, R9; \
	ADDQ AX, R10; \
	ADDQ AX, R11; \
	ADDQ AX, R12; \
	ADDQ AX, R13; \
	ADDQ AX, BX; \
	ADDQ AX, CX; \
	ADDQ AX, DX; \
	NEGQ AX

// HSUM8STORE reduces the eight accumulators Y0…Y7 of one row (already
// folded to 256 bits) and stores the sums for queries 0…7 at DI + j·ldo
// (BX = ldo bytes, DX = 3·ldo bytes, R8 = DI + 4·ldo).
#define HSUM8STORE \
	HSUM4(Y0, Y1, Y2, Y3, X0, X1);  \
	STORE4(X0);                     \
	HSUM4(Y4, Y5, Y6, Y7, X4, X5);  \
	VMOVSS     X4, (R8);            \
	VEXTRACTPS $1, X4, (R8)(BX*1);  \
	VEXTRACTPS $2, X4, (R8)(BX*2);  \
	VEXTRACTPS $3, X4, (R8)(DX*1)

// func dotTile3x8AVX512(rows, qs *float32, dim, n16 int, out *float32, ldo int)
//
// dotTile3x4 on 512-bit registers for 3 rows × 8 queries: accumulator
// Z(8·r+q) holds sixteen partial sums of row r · query q, Z24…Z26 the
// rows' sixteen columns and Z27 a query's. Per sixteen columns: three row
// loads, eight query loads, twenty-four independent FMAs. Every pointer is
// set to the end of its vectors and AX counts up from −n16·4 to 0, so the
// eleven pointers and the counter fit in the twelve free general registers.
TEXT ·dotTile3x8AVX512(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), SI
	MOVQ qs+8(FP), R9
	MOVQ dim+16(FP), DX
	MOVQ n16+24(FP), AX
	SHLQ $2, DX
	SHLQ $2, AX
	LEAQ (SI)(DX*1), DI
	LEAQ (DI)(DX*1), R8
	ADDQ AX, SI
	ADDQ AX, DI
	ADDQ AX, R8
	QUERIES8
	ZERO8Z(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)
	ZERO8Z(Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15)
	ZERO8Z(Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23)

loop38:
	VMOVUPS     (SI)(AX*1), Z24
	VMOVUPS     (DI)(AX*1), Z25
	VMOVUPS     (R8)(AX*1), Z26
	QFMA3((R9)(AX*1), Z27, Z24, Z25, Z26, Z0, Z8, Z16)
	QFMA3((R10)(AX*1), Z27, Z24, Z25, Z26, Z1, Z9, Z17)
	QFMA3((R11)(AX*1), Z27, Z24, Z25, Z26, Z2, Z10, Z18)
	QFMA3((R12)(AX*1), Z27, Z24, Z25, Z26, Z3, Z11, Z19)
	QFMA3((R13)(AX*1), Z27, Z24, Z25, Z26, Z4, Z12, Z20)
	QFMA3((BX)(AX*1), Z27, Z24, Z25, Z26, Z5, Z13, Z21)
	QFMA3((CX)(AX*1), Z27, Z24, Z25, Z26, Z6, Z14, Z22)
	QFMA3((DX)(AX*1), Z27, Z24, Z25, Z26, Z7, Z15, Z23)
	ADDQ        $64, AX
	JNZ         loop38

	FOLD8(Z0, Y0, Z1, Y1, Z2, Y2, Z3, Y3, Z4, Y4, Z5, Y5, Z6, Y6, Z7, Y7)
	FOLD8(Z8, Y8, Z9, Y9, Z10, Y10, Z11, Y11, Z12, Y12, Z13, Y13, Z14, Y14, Z15, Y15)
	FOLD8(Z16, Y16, Z17, Y17, Z18, Y18, Z19, Y19, Z20, Y20, Z21, Y21, Z22, Y22, Z23, Y23)

	MOVQ out+32(FP), DI
	MOVQ ldo+40(FP), BX
	SHLQ $2, BX
	LEAQ (BX)(BX*2), DX
	LEAQ (DI)(BX*4), R8

	// Row 0 from Y0…Y7.
	HSUM8STORE

	// Row 1: Y8…Y15 moved down (VHADDPS reaches only Y0…Y15, and the
	// macro names Y0…Y7).
	VMOVAPS Y8, Y0
	VMOVAPS Y9, Y1
	VMOVAPS Y10, Y2
	VMOVAPS Y11, Y3
	VMOVAPS Y12, Y4
	VMOVAPS Y13, Y5
	VMOVAPS Y14, Y6
	VMOVAPS Y15, Y7
	ADDQ    $4, DI
	ADDQ    $4, R8
	HSUM8STORE

	// Row 2.
	VMOVAPS Y16, Y0
	VMOVAPS Y17, Y1
	VMOVAPS Y18, Y2
	VMOVAPS Y19, Y3
	VMOVAPS Y20, Y4
	VMOVAPS Y21, Y5
	VMOVAPS Y22, Y6
	VMOVAPS Y23, Y7
	ADDQ    $4, DI
	ADDQ    $4, R8
	HSUM8STORE
	VZEROUPPER
	RET

// func dotTile1x8AVX512(rows, qs *float32, dim, n16 int, out *float32, ldo int)
//
// dotTile3x8AVX512 for one row: eight accumulators, the queries read as
// FMA memory operands.
TEXT ·dotTile1x8AVX512(SB), NOSPLIT, $0-48
	MOVQ rows+0(FP), SI
	MOVQ qs+8(FP), R9
	MOVQ dim+16(FP), DX
	MOVQ n16+24(FP), AX
	SHLQ $2, DX
	SHLQ $2, AX
	ADDQ AX, SI
	QUERIES8
	ZERO8Z(Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7)

loop18:
	VMOVUPS     (SI)(AX*1), Z24
	VFMADD231PS (R9)(AX*1), Z24, Z0
	VFMADD231PS (R10)(AX*1), Z24, Z1
	VFMADD231PS (R11)(AX*1), Z24, Z2
	VFMADD231PS (R12)(AX*1), Z24, Z3
	VFMADD231PS (R13)(AX*1), Z24, Z4
	VFMADD231PS (BX)(AX*1), Z24, Z5
	VFMADD231PS (CX)(AX*1), Z24, Z6
	VFMADD231PS (DX)(AX*1), Z24, Z7
	ADDQ        $64, AX
	JNZ         loop18

	FOLD8(Z0, Y0, Z1, Y1, Z2, Y2, Z3, Y3, Z4, Y4, Z5, Y5, Z6, Y6, Z7, Y7)
	MOVQ out+32(FP), DI
	MOVQ ldo+40(FP), BX
	SHLQ $2, BX
	LEAQ (BX)(BX*2), DX
	LEAQ (DI)(BX*4), R8
	HSUM8STORE
	VZEROUPPER
	RET
