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
	.file	"gcd.c"
	.text
	.align	2
	.global	main
	.syntax unified
	.arm
	.type	main, %function
main:
	@ args = 0, pretend = 0, frame = 0
	@ frame_needed = 0, uses_anonymous_args = 0
	@ link register save eliminated.
	movw	r3, #:lower16:.LANCHOR0
	movt	r3, #:upper16:.LANCHOR0
	ldr	r2, [r3]
	ldr	r3, [r3, #4]
	cmp	r3, #0
	beq	.L4
.L3:
	mov	r1, r3
	udiv	r0, r2, r3
	mls	r3, r3, r0, r2
	mov	r2, r1
	cmp	r3, #0
	bne	.L3
.L2:
	movw	r3, #:lower16:.LANCHOR1
	movt	r3, #:upper16:.LANCHOR1
	str	r1, [r3]
	mov	r0, #0
	bx	lr
.L4:
	mov	r1, r2
	b	.L2
	.size	main, .-main
	.global	g
	.global	b
	.global	a
	.data
	.align	2
	.set	.LANCHOR0,. + 0
	.type	a, %object
	.size	a, 4
a:
	.word	1071
	.type	b, %object
	.size	b, 4
b:
	.word	462
	.bss
	.align	2
	.set	.LANCHOR1,. + 0
	.type	g, %object
	.size	g, 4
g:
	.space	4
	.ident	"GCC: (15:12.2.rel1-1) 12.2.1 20221205"
