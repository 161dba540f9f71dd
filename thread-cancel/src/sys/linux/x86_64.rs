//! x86_64: the cancellable system-call trampoline and the program counter in a signal context.
//!
//! `thread_cancel_syscall_cp(word, nr, a1..a6)` loads the thread's state word *inside* the
//! address range `[thread_cancel_cp_begin, thread_cancel_cp_end)`, returns `CANCELED` if a
//! request must be acted on, and otherwise issues the system call. `thread_cancel_cp_end` is the
//! instruction right after `syscall`. The signal handler moves a program counter that lies in
//! the range to `thread_cancel_cp_cancel`:
//!
//! - interrupted before the `syscall` instruction: nothing was done; cancel;
//! - interrupted while blocked in it: the kernel rewinds a restartable call to the `syscall`
//!   instruction (inside the range): nothing was done; cancel;
//! - the call completed (the PC is at `thread_cancel_cp_end`): its result is returned, never
//!   canceled.

use super::syscall_cp::CANCELED;
use crate::state::{CP_MASK, PENDING};

core::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl thread_cancel_syscall_cp",
    ".hidden thread_cancel_syscall_cp",
    ".type thread_cancel_syscall_cp,@function",
    "thread_cancel_syscall_cp:",
    "mov r11, rdi",
    "mov rax, rsi",
    "mov rdi, rdx",
    "mov rsi, rcx",
    "mov rdx, r8",
    "mov r10, r9",
    "mov r8, [rsp + 8]",
    "mov r9, [rsp + 16]",
    ".globl thread_cancel_cp_begin",
    ".hidden thread_cancel_cp_begin",
    "thread_cancel_cp_begin:",
    "mov ecx, dword ptr [r11]",
    "and ecx, {mask}",
    "cmp ecx, {pending}",
    "je thread_cancel_cp_cancel",
    "syscall",
    ".globl thread_cancel_cp_end",
    ".hidden thread_cancel_cp_end",
    "thread_cancel_cp_end:",
    "ret",
    ".globl thread_cancel_cp_cancel",
    ".hidden thread_cancel_cp_cancel",
    "thread_cancel_cp_cancel:",
    "movabs rax, {canceled}",
    "ret",
    ".size thread_cancel_syscall_cp, . - thread_cancel_syscall_cp",
    mask = const CP_MASK,
    pending = const PENDING,
    canceled = const CANCELED,
);

/// The interrupted program counter in a signal handler's `ucontext_t`.
///
/// # Safety
/// `uc` must be the third argument of an `SA_SIGINFO` handler, for the duration of the handler.
pub(crate) unsafe fn pc(uc: *mut libc::c_void) -> *mut u64 {
    let uc = uc.cast::<libc::ucontext_t>();
    // SAFETY: the caller guarantees `uc` points to the kernel-provided context; `REG_RIP` is an
    // index within `gregs`.
    unsafe { (&raw mut (*uc).uc_mcontext.gregs[libc::REG_RIP as usize]).cast::<u64>() }
}
