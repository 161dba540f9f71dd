//! aarch64: the cancellable system-call trampoline (see `x86_64.rs` for the argument).
//! `ldar` keeps the word's load after the caller's sequentially consistent `in_syscall` store.
//!
//! The asynchronous-region functions follow `x86_64.rs` too: `thread_cancel_region_enter`
//! saves x19–x30, d8–d15 and FPCR on the stack and arms `ctx.sp`;
//! `thread_cancel_region_leave` resets `sp` from it, restores FPCR and returns 1 from
//! `enter`.

use crate::state::{ASYNC, BLOCK, REQUEST, ROOT, UNWINDING};

core::arch::global_asm!(
    ".text",
    ".p2align 4",
    // The same with the last two arguments zero (x86_64 needs this entry to keep every
    // argument in a register; here it only zeroes them).
    ".globl thread_cancel_syscall_cp4",
    ".hidden thread_cancel_syscall_cp4",
    ".type thread_cancel_syscall_cp4,%function",
    "thread_cancel_syscall_cp4:",
    "mov x6, xzr",
    "mov x7, xzr",
    "b thread_cancel_syscall_cp",
    ".globl thread_cancel_syscall_cp",
    ".hidden thread_cancel_syscall_cp",
    ".type thread_cancel_syscall_cp,%function",
    "thread_cancel_syscall_cp:",
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
    "stp x29, x30, [sp, #-176]!",
    "mov x29, sp",
    "stp x19, x20, [sp, #16]",
    "stp x21, x22, [sp, #32]",
    "stp x23, x24, [sp, #48]",
    "stp x25, x26, [sp, #64]",
    "stp x27, x28, [sp, #80]",
    "stp d8, d9, [sp, #96]",
    "stp d10, d11, [sp, #112]",
    "stp d12, d13, [sp, #128]",
    "stp d14, d15, [sp, #144]",
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
    "ldp x19, x20, [sp, #16]",
    "ldp x21, x22, [sp, #32]",
    "ldp x23, x24, [sp, #48]",
    "ldp x25, x26, [sp, #64]",
    "ldp x27, x28, [sp, #80]",
    "ldp d8, d9, [sp, #96]",
    "ldp d10, d11, [sp, #112]",
    "ldp d12, d13, [sp, #128]",
    "ldp d14, d15, [sp, #144]",
    "ldp x29, x30, [sp], #176",
    "ret",
    "2:",
    "mov x0, x19",
    "b thread_cancel_region_leave",
    "",
    ".p2align 4",
    ".globl thread_cancel_region_leave",
    ".hidden thread_cancel_region_leave",
    ".type thread_cancel_region_leave,%function",
    "thread_cancel_region_leave:",
    "ldr x9, [x0]",
    "mov sp, x9",
    "str xzr, [x0]",
    "ldr x9, [sp, #160]",
    "msr fpcr, x9",
    "mov x0, #1",
    "b thread_cancel_region_resume",
    "",
    ".p2align 4",
    ".globl thread_cancel_region_act",
    ".hidden thread_cancel_region_act",
    ".type thread_cancel_region_act,%function",
    "thread_cancel_region_act:",
    "ldr x9, [x0, #16]",
    "blr x9",
    "brk #1",
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
