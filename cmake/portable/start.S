/* SPDX-License-Identifier: Apache-2.0 */
/* The entry point of kernelhub's executables in the wheel (x86_64), used in place of the
   system's Scrt1.o (docs/wheels.md). glibc 2.34 changed what crt1 passes to
   __libc_start_main: no init function, because 2.34 runs the program's constructors itself.
   A program started that way on glibc 2.28 would never run its constructors. This start file
   passes one (kernelhub_start_init, start_init.c), as crt1 of glibc 2.28 did, and calls
   __libc_start_main at GLIBC_2.2.5, a version every glibc has; glibc 2.34 and later then call
   that function instead of running the constructors themselves. */
	.text
	.globl	_start
	.type	_start, @function
_start:
	xorl	%ebp, %ebp		/* outermost frame */
	movq	%rdx, %r9		/* rtld_fini from the dynamic linker */
	popq	%rsi			/* argc */
	movq	%rsp, %rdx		/* argv */
	andq	$-16, %rsp
	pushq	%rax			/* keeps the stack 16-byte aligned */
	pushq	%rsp			/* stack_end */
	leaq	kernelhub_start_init(%rip), %rcx	/* init */
	xorl	%r8d, %r8d		/* fini: the dynamic linker runs .fini_array */
	movq	main@GOTPCREL(%rip), %rdi
	call	*__libc_start_main@GOTPCREL(%rip)
	hlt
	.size	_start, .-_start
	.symver	__libc_start_main, __libc_start_main@GLIBC_2.2.5

/* Tells glibc that the program uses the current stdio ABI (libio), as every crt1 does. */
	.section .rodata
	.globl	_IO_stdin_used
	.type	_IO_stdin_used, @object
	.size	_IO_stdin_used, 4
	.align	4
_IO_stdin_used:
	.long	0x20001

	.section .note.GNU-stack, "", @progbits
