.syntax unified
    .arm
    .global _start
    .equ COUNT, 6
    .text
_start:
    ldr sp, =stack_top
    ldr r1, =table
    ldr r2, =COUNT
    mov r0, #0
    mov r3, #0x12000         @ a rotated immediate
    mvn r4, #0               @ all ones
    add r5, r3, #-4          @ becomes sub
    movw r6, #0xbeef
    movt r6, #0xdead
loop:
    ldr r7, [r1], #4
    add r0, r0, r7, lsl #1
    subs r2, r2, #1
    bne loop
    ldr r8, =message
    ldrb r9, [r8, #2]
    ldrsh r10, [r1, #-2]
    push {r4-r6, lr}
    pop {r4-r6, lr}
    cmp r0, #100
    movgt r11, #1
    movle r11, #2
    cmp r5, #-1              @ becomes cmn r5, #1
    cmn r0, #-100            @ becomes cmp r0, #100
    addgt r11, r11, #4
    bfi r11, r9, #8, #8
    ubfx r12, r6, #4, #12
    str r0, [r1]
    strh r12, [r1, #4]
    svc #0
    .data
table:
    .word 1, 2, 3, 0x10, -1, 0x7fff0000
    .word 0
    .hword 0x1234, 7
message:
    .asciz
