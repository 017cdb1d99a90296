@ dot4(a, b): the sum of a[i] * b[i] for i < 4, wrapping like C's int,
@ reading both arrays through pointers. The pointers are public inputs,
@ given as clear registers; the arrays (the data memory) are encrypted:
@
@   hearth emu run examples/emu/dot4.s --clear-reg r0=@a --clear-reg r1=@b
@
@ `@a` is the address of the label `a` (in an ELF, of the symbol `a`).
    .text
_start:
    ldr sp, =stack_top
    bl dot4                 @ r0 = dot4(r0, r1)
    svc #0

dot4:
    push {r4, lr}
    mov r12, #0             @ the sum
    mov r4, #4              @ elements left: clear, so no branch decision
loop:
    ldr r2, [r0], #4        @ a[i], through the clear pointer r0
    ldr r3, [r1], #4        @ b[i], through r1
    mla r12, r2, r3, r12    @ encrypted * encrypted + encrypted
    subs r4, r4, #1
    bne loop
    mov r0, r12
    pop {r4, pc}

    .data
a:  .word 3, -1, 4, 1000
b:  .word -2, 7, 5, 123456
    .space 32               @ the stack
stack_top:
