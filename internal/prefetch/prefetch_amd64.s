//go:build amd64 && !noasm

#include "textflag.h"

// func Lines(p unsafe.Pointer, n int)
TEXT ·Lines(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
loop:
	TESTQ CX, CX
	JLE   done
	PREFETCHT0 (AX)
	ADDQ  $64, AX
	DECQ  CX
	JMP   loop
done:
	RET

// func Rows(base unsafe.Pointer, stride uintptr, ids []uint32, lines int)
TEXT ·Rows(SB), NOSPLIT, $0-48
	MOVQ base+0(FP), SI
	MOVQ stride+8(FP), DX
	MOVQ ids_base+16(FP), DI
	MOVQ ids_len+24(FP), R8
	MOVQ lines+40(FP), R9
row:
	TESTQ R8, R8
	JLE   done
	MOVL  (DI), AX
	IMULQ DX, AX
	ADDQ  SI, AX
	MOVQ  R9, CX
line:
	TESTQ CX, CX
	JLE   next
	PREFETCHT0 (AX)
	ADDQ  $64, AX
	DECQ  CX
	JMP   line
next:
	ADDQ  $4, DI
	DECQ  R8
	JMP   row
done:
	RET

