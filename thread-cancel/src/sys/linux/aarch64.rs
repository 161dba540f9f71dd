//! aarch64: the cancellable system-call trampoline (see `x86_64.rs` for the argument).
//! `ldar` keeps the word's load after the caller's sequentially consistent `in_syscall` store.

use crate::state::{CP_MASK, PENDING};

core::arch::global_asm!(
    ".text",
    ".p2align 4",
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
    "mov w11, #{mask}",
    "and w10, w10, w11",
    "cmp w10, #{pending}",
    "b.eq thread_cancel_cp_cancel",
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
    mask = const CP_MASK,
    pending = const PENDING,
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
