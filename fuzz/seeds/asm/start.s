    .syntax unified
    .arm
    .global _start
    .text
_start:
    ldr sp, =__stack_top
    bl main
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
