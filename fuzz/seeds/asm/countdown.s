@ Sums the words of `data` into r0 and counts r4 (encrypted) down to zero:
@ the loop exit depends on encrypted data, so the key owner decides it.
    .text
_start:
    ldr r1, =data
    ldm r1, {r2, r3}
    add r0, r2, r3          @ encrypted + encrypted
    cmp r0, #100
    movgt r0, #100          @ clamp, obliviously
    str r0, [r1, #8]
loop:
    subs r4, r4, #1
    bne loop
    svc #0
    .data
data:
    .word 40, 70, 0
