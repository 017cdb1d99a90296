	.arch armv7-a
	.arch_extension virt
	.arch_extension idiv
	.arch_extension sec
	.arch_extension mp
	.fpu softvfp
	.eabi_attribute 20, 1
	.eabi_attribute 21, 1
	.eabi_attribute 23, 3
	.eabi_attribute 24, 1
	.eabi_attribute 25, 1
	.eabi_attribute 26, 1
	.eabi_attribute 30, 1
	.eabi_attribute 34, 1
	.eabi_attribute 18, 4
	.file	"bubble.c"
	.text
	.align	2
	.global	main
	.syntax unified
	.arm
	.type	main, %function
main:
	@ args = 0, pretend = 0, frame = 0
	@ frame_needed = 0, uses_anonymous_args = 0
	str	lr, [sp, #-4]!
	movw	lr, #:lower16:.LANCHOR0
	movt	lr, #:upper16:.LANCHOR0
	add	r0, lr, #28
	mov	ip, #7
	b	.L2
.L4:
	ldr	r2, [r3]
	ldr	r1, [r3, #4]!
	cmp	r2, r1
	strgt	r1, [r3, #-4]
	strgt	r2, [r3]
	cmp	r3, r0
	bne	.L4
.L6:
	sub	r0, r0, #4
	subs	ip, ip, #1
	beq	.L5
.L2:
	cmp	ip, #0
	movgt	r3, lr
	bgt	.L4
	b	.L6
.L5:
	mov	r0, #0
	ldr	pc, [sp], #4
	.size	main, .-main
	.global	a
	.data
	.align	2
	.set	.LANCHOR0,. + 0
	.type	a, %object
	.size	a, 32
a:
	.word	42
	.word	-7
	.word	19
	.word	0
	.word	1000
	.word	-300
	.word	5
	.word	19
	.ident	"GCC: (15:12.2.rel1-1) 12.2.1 20221205"
