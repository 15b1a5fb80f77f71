/* RISC-V RV64GC decoding (Capstone 4 has no RISC-V): length, class, registers
 * read and written (edag numbering: xN -> N with x0 -> 0, fN -> 64+N, fcsr ->
 * 128) and the memory operand as base + displacement, for the base ISA (RV64I),
 * M, A, F, D, Zicsr/Zifencei and the compressed instructions (C). Pure. */
#ifndef AGENT_TRACE_DECODE_RISCV_H
#define AGENT_TRACE_DECODE_RISCV_H

#include <stddef.h>
#include <stdint.h>

#include "decode.h"

/* Decode the instruction at pc from code[0..len). Returns 0 and fills *o
 * (o->pc, len, class, registers, memory operand, mnemonic), -EILSEQ for bytes
 * that are no RV64GC instruction (or too few bytes). Floating-point arithmetic
 * does not read or write fcsr here (its accrued flags would chain every FP
 * operation into one false dependence); the CSR instructions on fflags, frm and
 * fcsr do. */
int trace_decode_riscv(uint64_t pc, const uint8_t *code, size_t len, struct trace_decoded *o);

#endif
