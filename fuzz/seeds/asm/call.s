@ Start code for a function of two pointer arguments, `dot4(r0, r1)`:
@ `_start` (the ELF's entry) takes r0 and r1 as the run starts them (the
@ emulator: `--clear-reg r0=@a --clear-reg r1=@b`), stores the result in
@ `result` and exits writing the data memory to stdout, as start.s does.
@ `qemu_start` is qemu-arm's entry (linked with `-e qemu_start`): it sets
@ r0 and r1 to the arrays and every other register and flag to the
@ emulator's initial zeros, then falls into `_start`.
    .syntax unified
    .arm
    .global _start, qemu_start
    .text
qemu_start:
    ldr r0, =a
    ldr r1, =b
    mov r2, #0
    adds r2, r2, #1         @ N, Z, C, V clear
    mov r2, #0
    mov r3, #0
    mov r4, #0
    mov r5, #0
    mov r6, #0
    mov r7, #0
    mov r8, #0
    mov r9, #0
    mov r10, #0
    mov r11, #0
    mov r12, #0
    mov lr, #0
_start:
    ldr sp, =__stack_top
    bl dot4
    ldr r1, =result
    str r0, [r1]
    ldr r1, =__data_start
    ldr r2, =__data_end
    sub r2, r2, r1
    mov r0, #1
    mov r7, #4
    svc #0
    mov r0, #0
    mov r7, #1
    svc #0
    .bss
    .align 3
    .space 1024
__stack_top:
