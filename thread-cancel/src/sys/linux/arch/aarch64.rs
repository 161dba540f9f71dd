//! aarch64: the cancellable system-call trampoline (see `x86_64.rs` for the argument).
//! `ldar` keeps the word's load after the caller's sequentially consistent `in_syscall` store.
//!
//! The asynchronous-region functions follow `x86_64.rs` too: `thread_cancel_region_enter`
//! saves x19–x30, d8–d15 and FPCR on the stack and arms `ctx.sp`;
//! `thread_cancel_region_leave` resets `sp` from it, restores FPCR and returns 1 from
//! `enter`.
//!
//! Every function carries CFI but `thread_cancel_region_act` (deliberately none, as on x86_64),
//! so that a backtrace or an unwind started inside a region walks through to the thread's root.

use crate::word::{ASYNC, BLOCK, REQUEST, ROOT, UNWINDING};

core::arch::global_asm!(
    ".text",
    ".p2align 4",
    // The same with the last two arguments zero (x86_64 needs this entry to keep every
    // argument in a register; here it only zeroes them).
    ".globl thread_cancel_syscall_cp4",
    ".hidden thread_cancel_syscall_cp4",
    ".type thread_cancel_syscall_cp4,%function",
    "thread_cancel_syscall_cp4:",
    // Leaves: the stack pointer never moves and the return address stays in x30, which is
    // what `.cfi_startproc` says (CFA = sp).
    ".cfi_startproc",
    "mov x6, xzr",
    "mov x7, xzr",
    "b thread_cancel_syscall_cp",
    ".cfi_endproc",
    ".size thread_cancel_syscall_cp4, . - thread_cancel_syscall_cp4",
    ".p2align 4",
    ".globl thread_cancel_syscall_cp",
    ".hidden thread_cancel_syscall_cp",
    ".type thread_cancel_syscall_cp,%function",
    "thread_cancel_syscall_cp:",
    ".cfi_startproc",
    "mov x9, x0",
    "mov x8, x1",
    "mov x0, x2",
    "mov x1, x3",
    "mov x2, x4",
    "mov x3, x5",
    "mov x4, x6",
    "mov x5, x7",
    ".globl thread_cancel_cp_begin",
    ".hidden thread_cancel_cp_begin",
    "thread_cancel_cp_begin:",
    "ldar w10, [x9]",
    // The same tests as x86_64.rs: nothing requested or blocking, the call; a request and
    // nothing blocking, act; unwinding but not at the root, raise it again.
    "mov w11, #{slow}",
    "tst w10, w11",
    "b.eq 3f",
    "mov w11, #{block}",
    "tst w10, w11",
    "b.eq thread_cancel_cp_cancel",
    "and w10, w10, #{unw_root}",
    "cbz w10, 3f",
    "cmp w10, #{root}",
    "b.lo thread_cancel_cp_cancel",
    "3:",
    "svc #0",
    ".globl thread_cancel_cp_end",
    ".hidden thread_cancel_cp_end",
    "thread_cancel_cp_end:",
    "ret",
    ".globl thread_cancel_cp_cancel",
    ".hidden thread_cancel_cp_cancel",
    "thread_cancel_cp_cancel:",
    "mov x0, #0x8000000000000000", // CANCELED (i64::MIN)
    "ret",
    ".cfi_endproc",
    ".size thread_cancel_syscall_cp, . - thread_cancel_syscall_cp",
    slow = const BLOCK | REQUEST,
    block = const BLOCK,
    unw_root = const UNWINDING | ROOT,
    root = const ROOT,
);

core::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl thread_cancel_region_enter",
    ".hidden thread_cancel_region_enter",
    ".type thread_cancel_region_enter,%function",
    "thread_cancel_region_enter:",
    // Frame (176 bytes, CFA = sp + 176 once the first store ran): x29, x30 at 0, x19-x28 at
    // 16..96, d8-d15 at 96..160, FPCR at 160. The CFI records every save, so an unwinder
    // (a backtrace, a panic's or a cancellation's unwind) started inside `f` walks through.
    ".cfi_startproc",
    "stp x29, x30, [sp, #-176]!",
    ".cfi_def_cfa_offset 176",
    ".cfi_offset x29, -176",
    ".cfi_offset x30, -168",
    "mov x29, sp",
    "stp x19, x20, [sp, #16]",
    ".cfi_offset x19, -160",
    ".cfi_offset x20, -152",
    "stp x21, x22, [sp, #32]",
    ".cfi_offset x21, -144",
    ".cfi_offset x22, -136",
    "stp x23, x24, [sp, #48]",
    ".cfi_offset x23, -128",
    ".cfi_offset x24, -120",
    "stp x25, x26, [sp, #64]",
    ".cfi_offset x25, -112",
    ".cfi_offset x26, -104",
    "stp x27, x28, [sp, #80]",
    ".cfi_offset x27, -96",
    ".cfi_offset x28, -88",
    "stp d8, d9, [sp, #96]",
    ".cfi_offset d8, -80",
    ".cfi_offset d9, -72",
    "stp d10, d11, [sp, #112]",
    ".cfi_offset d10, -64",
    ".cfi_offset d11, -56",
    "stp d12, d13, [sp, #128]",
    ".cfi_offset d12, -48",
    ".cfi_offset d13, -40",
    "stp d14, d15, [sp, #144]",
    ".cfi_offset d14, -32",
    ".cfi_offset d15, -24",
    "mrs x9, fpcr",
    "str x9, [sp, #160]",
    "mov x19, x0",
    "mov x9, sp",
    "str x9, [x19]",
    "ldr x9, [x19, #8]",
    "ldar w10, [x9]",
    // As x86_64.rs: asynchronous, nothing blocking, a request pending: leave.
    "eor w10, w10, #{async}",
    "mov w11, #{ablock}",
    "tst w10, w11",
    "b.ne 4f",
    "mov w11, #{request}",
    "tst w10, w11",
    "b.ne 2f",
    "4:",
    "mov x0, x2",
    "blr x1",
    "str xzr, [x19]",
    "mov x0, #0",
    ".globl thread_cancel_region_resume",
    ".hidden thread_cancel_region_resume",
    "thread_cancel_region_resume:",
    ".cfi_remember_state",
    "ldp x19, x20, [sp, #16]",
    ".cfi_restore x19",
    ".cfi_restore x20",
    "ldp x21, x22, [sp, #32]",
    ".cfi_restore x21",
    ".cfi_restore x22",
    "ldp x23, x24, [sp, #48]",
    ".cfi_restore x23",
    ".cfi_restore x24",
    "ldp x25, x26, [sp, #64]",
    ".cfi_restore x25",
    ".cfi_restore x26",
    "ldp x27, x28, [sp, #80]",
    ".cfi_restore x27",
    ".cfi_restore x28",
    "ldp d8, d9, [sp, #96]",
    ".cfi_restore d8",
    ".cfi_restore d9",
    "ldp d10, d11, [sp, #112]",
    ".cfi_restore d10",
    ".cfi_restore d11",
    "ldp d12, d13, [sp, #128]",
    ".cfi_restore d12",
    ".cfi_restore d13",
    "ldp d14, d15, [sp, #144]",
    ".cfi_restore d14",
    ".cfi_restore d15",
    "ldp x29, x30, [sp], #176",
    ".cfi_def_cfa_offset 0",
    ".cfi_restore x29",
    ".cfi_restore x30",
    "ret",
    // Still the whole frame (the state before the epilogue).
    ".cfi_restore_state",
    "2:",
    "mov x0, x19",
    "b thread_cancel_region_leave",
    ".cfi_endproc",
    ".size thread_cancel_region_enter, . - thread_cancel_region_enter",
    "",
    ".p2align 4",
    ".globl thread_cancel_region_leave",
    ".hidden thread_cancel_region_leave",
    ".type thread_cancel_region_leave,%function",
    "thread_cancel_region_leave:",
    // Entered by a jump (from `enter`, or from the signal handler's edit of the context) with
    // x0 = ctx, on any stack: until sp is reset, the frame is `enter`'s at ctx.sp, so
    // CFA = [x0] + 176 (DW_CFA_def_cfa_expression: DW_OP_breg0 0, DW_OP_deref,
    // DW_OP_plus_uconst 176), with `enter`'s saves. Its caller is `enter`'s: the abandoned
    // frames are skipped.
    ".cfi_startproc",
    ".cfi_escape 0x0f, 0x06, 0x70, 0x00, 0x06, 0x23, 0xb0, 0x01",
    ".cfi_offset x29, -176",
    ".cfi_offset x30, -168",
    ".cfi_offset x19, -160",
    ".cfi_offset x20, -152",
    ".cfi_offset x21, -144",
    ".cfi_offset x22, -136",
    ".cfi_offset x23, -128",
    ".cfi_offset x24, -120",
    ".cfi_offset x25, -112",
    ".cfi_offset x26, -104",
    ".cfi_offset x27, -96",
    ".cfi_offset x28, -88",
    ".cfi_offset d8, -80",
    ".cfi_offset d9, -72",
    ".cfi_offset d10, -64",
    ".cfi_offset d11, -56",
    ".cfi_offset d12, -48",
    ".cfi_offset d13, -40",
    ".cfi_offset d14, -32",
    ".cfi_offset d15, -24",
    "ldr x9, [x0]",
    "mov sp, x9",
    // From here (ctx.sp is cleared next) the frame is found from sp, as in `enter`.
    ".cfi_def_cfa sp, 176",
    "str xzr, [x0]",
    "ldr x9, [sp, #160]",
    "msr fpcr, x9",
    "mov x0, #1",
    "b thread_cancel_region_resume",
    ".cfi_endproc",
    ".size thread_cancel_region_leave, . - thread_cancel_region_leave",
    "",
    ".p2align 4",
    ".globl thread_cancel_region_act",
    ".hidden thread_cancel_region_act",
    ".type thread_cancel_region_act,%function",
    "thread_cancel_region_act:",
    // Entered from the signal handler with x0 = ctx and a 16-byte aligned stack below the
    // interrupted frame: call the region's `act(ctx)` (which never returns). Deliberately no
    // CFI, as on x86_64: the interrupted frame cannot be unwound (x30 is not its return
    // address), so a C forced unwind from `act` ends here (ARCHITECTURE.md, "The C ABI").
    "ldr x9, [x0, #16]",
    "blr x9",
    "brk #1",
    ".size thread_cancel_region_act, . - thread_cancel_region_act",
    async = const ASYNC,
    ablock = const BLOCK | ASYNC,
    request = const REQUEST,
);

/// The interrupted program counter in a signal handler's `ucontext_t`.
///
/// # Safety
/// `uc` must be the third argument of an `SA_SIGINFO` handler, for the duration of the handler.
pub(crate) unsafe fn pc(uc: *mut libc::c_void) -> *mut u64 {
    let uc = uc.cast::<libc::ucontext_t>();
    // SAFETY: the caller guarantees `uc` points to the kernel-provided context.
    unsafe { &raw mut (*uc).uc_mcontext.pc }
}

/// Makes the interrupted thread resume in `target(arg)` (see `x86_64.rs`).
///
/// # Safety
/// As [`pc`]; `target` must be code that is correct to run with these registers.
pub(crate) unsafe fn divert(uc: *mut libc::c_void, target: u64, arg: u64, fresh_frame: bool) {
    let uc = uc.cast::<libc::ucontext_t>();
    // SAFETY: the caller guarantees `uc` points to the kernel-provided context.
    unsafe {
        let m = &raw mut (*uc).uc_mcontext;
        (*m).pc = target;
        (*m).regs[0] = arg;
        if fresh_frame {
            (*m).sp = ((*m).sp - 128) & !15;
        }
    }
}
