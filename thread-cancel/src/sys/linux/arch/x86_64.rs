//! x86_64: the cancellable system-call trampoline and the program counter in a signal context.
//!
//! `thread_cancel_cp_begin` is entered by a `call` from inline assembly (`syscall_cp::syscall_cp`) with
//! the system call's own registers already in place — the number in `rax`, the arguments in
//! `rdi`, `rsi`, `rdx`, `r10`, `r8`, `r9` — and the address of the thread's state word in
//! `r11`. It loads the word *inside* the address range `[thread_cancel_cp_begin,
//! thread_cancel_cp_end)`, returns `CANCELED` in `rax` if a request must be acted on (or a
//! swallowed cancellation raised again: terminating, not at the root), and otherwise issues the
//! system call and returns its result in `rax`. It changes only `rax`, `rcx`, `r11` and the
//! flags (what `syscall` itself clobbers), so the caller's argument registers survive the call
//! and no argument is moved. `thread_cancel_cp_end` is the instruction right after `syscall`.
//! The signal handler moves a program counter that lies in the range to
//! `thread_cancel_cp_cancel`:
//!
//! - interrupted before the `syscall` instruction: nothing was done; cancel;
//! - interrupted while blocked in it: the kernel rewinds a restartable call to the `syscall`
//!   instruction (inside the range): nothing was done; cancel;
//! - the call completed (the PC is at `thread_cancel_cp_end`): its result is returned, never
//!   canceled.
//!
//! Asynchronous regions: `thread_cancel_region_enter(ctx, f, arg)` saves the callee-saved
//! registers on the stack, records the stack pointer in `ctx.sp` (the region is *armed*),
//! checks the state word (a request pending at entry, with the type asynchronous, leaves at
//! once, before `f` runs), calls
//! `f(arg)`, disarms and returns 0. `thread_cancel_region_leave(ctx)` is the way out from
//! anywhere inside `f`: it resets the stack pointer to `ctx.sp`, so every frame below is
//! abandoned, restores the SSE/x87 control words saved at entry and returns 1 from
//! `thread_cancel_region_enter`. The callee-saved registers come back from the stack, so
//! nothing else needs saving. The signal handler never jumps itself: it edits the interrupted
//! context so that the thread resumes in `thread_cancel_region_leave` (or in
//! `thread_cancel_region_act`, which calls the region's `act` function first, for C).

use super::syscall_cp::CANCELED;
use crate::word::{ASYNC, BLOCK, REQUEST, ROOT, UNWINDING};

core::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl thread_cancel_cp_begin",
    ".hidden thread_cancel_cp_begin",
    ".type thread_cancel_cp_begin,@function",
    "thread_cancel_cp_begin:",
    "mov ecx, dword ptr [r11]",
    // Nothing requested, nothing blocking: the call (the hot path is this one test).
    "test ecx, {slow}",
    "jz 2f",
    // A request and nothing blocking it: act.
    "test ecx, {block}",
    "jz thread_cancel_cp_cancel",
    // Unwinding (a swallowed cancellation, exit or scope cancel) but not yet at the root:
    // raise it again. Every unwinding bit is below ROOT.
    "and ecx, {unw_root}",
    "jz 2f",
    "cmp ecx, {root}",
    "jb thread_cancel_cp_cancel",
    "2:",
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
    ".size thread_cancel_cp_begin, . - thread_cancel_cp_begin",
    slow = const BLOCK | REQUEST,
    block = const BLOCK,
    unw_root = const UNWINDING | ROOT,
    root = const ROOT,
    canceled = const CANCELED,
);

core::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl thread_cancel_region_enter",
    ".hidden thread_cancel_region_enter",
    ".type thread_cancel_region_enter,@function",
    "thread_cancel_region_enter:",
    ".cfi_startproc",
    "push rbp",
    ".cfi_adjust_cfa_offset 8",
    ".cfi_rel_offset rbp, 0",
    "push rbx",
    ".cfi_adjust_cfa_offset 8",
    ".cfi_rel_offset rbx, 0",
    "push r12",
    ".cfi_adjust_cfa_offset 8",
    ".cfi_rel_offset r12, 0",
    "push r13",
    ".cfi_adjust_cfa_offset 8",
    ".cfi_rel_offset r13, 0",
    "push r14",
    ".cfi_adjust_cfa_offset 8",
    ".cfi_rel_offset r14, 0",
    "push r15",
    ".cfi_adjust_cfa_offset 8",
    ".cfi_rel_offset r15, 0",
    // Keeps the stack 16-byte aligned for the call, and holds MXCSR and the x87 control word.
    "sub rsp, 8",
    ".cfi_adjust_cfa_offset 8",
    "stmxcsr dword ptr [rsp]",
    "fnstcw word ptr [rsp + 4]",
    "mov rbx, rdi",
    // Armed: from here a cancellation may leave through `thread_cancel_region_leave`.
    "mov qword ptr [rbx], rsp",
    // A request pending at entry (and enabled) leaves before `f` runs. The caller published
    // the region with a sequentially consistent store before this load.
    "mov rcx, qword ptr [rbx + 8]",
    "mov ecx, dword ptr [rcx]",
    // Leave if asynchronous, nothing blocking and a request pending (ASYNC flipped to a bit
    // that must be clear).
    "xor ecx, {async}",
    "test ecx, {ablock}",
    "jnz 3f",
    "test ecx, {request}",
    "jnz 2f",
    "3:",
    "mov rdi, rdx",
    "call rsi",
    "mov qword ptr [rbx], 0",
    "xor eax, eax",
    ".globl thread_cancel_region_resume",
    ".hidden thread_cancel_region_resume",
    "thread_cancel_region_resume:",
    ".cfi_remember_state",
    "add rsp, 8",
    ".cfi_adjust_cfa_offset -8",
    "pop r15",
    ".cfi_adjust_cfa_offset -8",
    "pop r14",
    ".cfi_adjust_cfa_offset -8",
    "pop r13",
    ".cfi_adjust_cfa_offset -8",
    "pop r12",
    ".cfi_adjust_cfa_offset -8",
    "pop rbx",
    ".cfi_adjust_cfa_offset -8",
    "pop rbp",
    ".cfi_adjust_cfa_offset -8",
    "ret",
    ".cfi_restore_state",
    "2:",
    "mov rdi, rbx",
    "jmp thread_cancel_region_leave",
    ".cfi_endproc",
    ".size thread_cancel_region_enter, . - thread_cancel_region_enter",
    "",
    ".p2align 4",
    ".globl thread_cancel_region_leave",
    ".hidden thread_cancel_region_leave",
    ".type thread_cancel_region_leave,@function",
    "thread_cancel_region_leave:",
    "mov rsp, qword ptr [rdi]",
    "mov qword ptr [rdi], 0",
    "ldmxcsr dword ptr [rsp]",
    "fldcw word ptr [rsp + 4]",
    "cld",
    "mov eax, 1",
    "jmp thread_cancel_region_resume",
    ".size thread_cancel_region_leave, . - thread_cancel_region_leave",
    "",
    ".p2align 4",
    ".globl thread_cancel_region_act",
    ".hidden thread_cancel_region_act",
    ".type thread_cancel_region_act,@function",
    "thread_cancel_region_act:",
    // Entered from the signal handler with rdi = ctx and a 16-byte aligned stack below the
    // interrupted frame: call the region's `act(ctx)` (which never returns).
    "cld",
    "call qword ptr [rdi + 16]",
    "ud2",
    ".size thread_cancel_region_act, . - thread_cancel_region_act",
    async = const ASYNC,
    ablock = const BLOCK | ASYNC,
    request = const REQUEST,
);

// Feature `interpose`: the calling thread's control-block pointer, in a thread-local slot of
// its own (`control/tls.rs` keeps it there instead of in a `thread_local!`). Rust compiles a
// library's thread-locals for the general-dynamic model: in the object code their read is a
// call to `__tls_get_addr`, which clobbers the argument registers, so every interposed
// function saved its arguments in callee-saved registers around it (pushed and popped on
// every call), even though the linker of an executable then turns the call into two loads.
// This slot is read with the initial-exec model instead: one load of its offset from the GOT
// (an immediate once the linker relaxes it in an executable) and one `fs`-relative load, no
// call. The feature is for programs: in a shared object the initial-exec model needs
// static TLS, which a library loaded with `dlopen` may not get.
#[cfg(thread_cancel_tls_slot)]
core::arch::global_asm!(
    ".pushsection .tbss,\"awT\",@nobits",
    ".p2align 3",
    ".globl thread_cancel_current_slot",
    ".hidden thread_cancel_current_slot",
    ".type thread_cancel_current_slot,@object",
    ".size thread_cancel_current_slot, 8",
    "thread_cancel_current_slot:",
    ".zero 8",
    ".popsection",
);

/// The calling thread's slot (see the slot's definition above): null until
/// [`set_current_slot`] stores a pointer. Async-signal-safe: two loads, no call.
#[cfg(thread_cancel_tls_slot)]
#[inline(always)]
pub(crate) fn current_slot() -> usize {
    let p: usize;
    // SAFETY: the GOT entry holds the slot's offset from the thread pointer (`fs`), so the
    // second load reads the calling thread's 8-byte, 8-aligned slot, which exists in every
    // thread from its start (static TLS, zero-initialised). Reads memory only, and only
    // memory that `set_current_slot` (an `asm!` the compiler treats as writing any memory)
    // writes: `pure` lets two reads with no write between them be one.
    unsafe {
        core::arch::asm!(
            "mov {p}, qword ptr [rip + thread_cancel_current_slot@GOTTPOFF]",
            "mov {p}, qword ptr fs:[{p}]",
            p = out(reg) p,
            options(pure, nostack, preserves_flags, readonly),
        );
    }
    p
}

/// Stores `v` in the calling thread's slot.
#[cfg(thread_cancel_tls_slot)]
#[inline(always)]
pub(crate) fn set_current_slot(v: usize) {
    // SAFETY: as in `current_slot`; writes the calling thread's own slot only.
    unsafe {
        core::arch::asm!(
            "mov {t}, qword ptr [rip + thread_cancel_current_slot@GOTTPOFF]",
            "mov qword ptr fs:[{t}], {v}",
            t = out(reg) _,
            v = in(reg) v,
            options(nostack, preserves_flags),
        );
    }
}

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

/// Makes the interrupted thread resume in `target(arg)` instead of where it was: the program
/// counter and the first argument register are replaced. With `fresh_frame`, the stack pointer
/// is also moved below the red zone and aligned for a call (for `thread_cancel_region_act`);
/// otherwise it is kept (`thread_cancel_region_leave` replaces it itself).
///
/// # Safety
/// As [`pc`]; `target` must be code that is correct to run with these registers.
pub(crate) unsafe fn divert(uc: *mut libc::c_void, target: u64, arg: u64, fresh_frame: bool) {
    let uc = uc.cast::<libc::ucontext_t>();
    // SAFETY: the caller guarantees `uc` points to the kernel-provided context; the indices are
    // within `gregs`.
    unsafe {
        let g = &raw mut (*uc).uc_mcontext.gregs;
        (*g)[libc::REG_RIP as usize] = target as i64;
        (*g)[libc::REG_RDI as usize] = arg as i64;
        if fresh_frame {
            let sp = (*g)[libc::REG_RSP as usize] as u64;
            (*g)[libc::REG_RSP as usize] = ((sp - 128) & !15) as i64;
        }
    }
}
