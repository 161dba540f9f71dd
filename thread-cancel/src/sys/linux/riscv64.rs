//! riscv64: the cancellable system-call trampoline and the asynchronous-region functions (see
//! `x86_64.rs` for the argument; the range, the tests of the state word and the region's ways
//! out are the same).
//!
//! Memory ordering (RVWMO). The word's load must not be performed before the caller's earlier
//! store of `in_syscall` (or of the region's registration): the Dekker pairing with the
//! canceler's `fetch_or`. x86_64 gets this from the store being sequentially consistent (a
//! locked instruction), aarch64 from `ldar` after the `stlr` of a sequentially consistent store.
//! On RISC-V a sequentially consistent store is `fence rw,w; sw`, which orders nothing *after*
//! it: a later plain `lw` may be satisfied before the `sw` is visible. So the load here is the
//! sequentially consistent load of the standard mapping, `fence rw,rw; lw; fence r,rw`: the
//! leading fence orders the caller's store before it (when `fence.rs` uses `membarrier`, the
//! store is relaxed and the canceler's barrier covers it; the fence is then redundant but
//! harmless). The fences are inside the range `[thread_cancel_cp_begin, thread_cancel_cp_end)`,
//! so a signal on them cancels a call that was not made.
//!
//! `thread_cancel_region_enter` saves ra, s0–s11, fs0–fs11 and `fcsr` in a 208-byte frame (the
//! stack stays 16-byte aligned) and arms `ctx.sp`; `thread_cancel_region_leave` resets `sp`
//! from it, restores `fcsr` and returns 1 from `enter`.

use super::syscall_cp::CANCELED;
use crate::state::{ASYNC, BLOCK, REQUEST, ROOT, UNWINDING};

core::arch::global_asm!(
    ".text",
    ".p2align 2",
    // The same with the last two arguments zero (x86_64 needs this entry to keep every
    // argument in a register; here it only zeroes them).
    ".globl thread_cancel_syscall_cp4",
    ".hidden thread_cancel_syscall_cp4",
    ".type thread_cancel_syscall_cp4,@function",
    "thread_cancel_syscall_cp4:",
    "li a6, 0",
    "li a7, 0",
    "j thread_cancel_syscall_cp",
    ".size thread_cancel_syscall_cp4, . - thread_cancel_syscall_cp4",
    ".p2align 2",
    ".globl thread_cancel_syscall_cp",
    ".hidden thread_cancel_syscall_cp",
    ".type thread_cancel_syscall_cp,@function",
    "thread_cancel_syscall_cp:",
    // (word, nr, a1..a6) in a0..a7 -> the word in t0, the call's arguments in a0..a5, the
    // number in a7.
    "mv t0, a0",
    "mv t1, a1",
    "mv a0, a2",
    "mv a1, a3",
    "mv a2, a4",
    "mv a3, a5",
    "mv a4, a6",
    "mv a5, a7",
    "mv a7, t1",
    ".globl thread_cancel_cp_begin",
    ".hidden thread_cancel_cp_begin",
    "thread_cancel_cp_begin:",
    "fence rw, rw",
    "lw t1, 0(t0)",
    "fence r, rw",
    // The same tests as x86_64.rs: nothing requested or blocking, the call; a request and
    // nothing blocking, act; unwinding but not at the root, raise it again.
    "andi t2, t1, {slow}",
    "beqz t2, 3f",
    "andi t2, t1, {block}",
    "beqz t2, thread_cancel_cp_cancel",
    "andi t2, t1, {unw_root}",
    "beqz t2, 3f",
    "li t3, {root}",
    "bltu t2, t3, thread_cancel_cp_cancel",
    "3:",
    "ecall",
    ".globl thread_cancel_cp_end",
    ".hidden thread_cancel_cp_end",
    "thread_cancel_cp_end:",
    "ret",
    ".globl thread_cancel_cp_cancel",
    ".hidden thread_cancel_cp_cancel",
    "thread_cancel_cp_cancel:",
    "li a0, {canceled}",
    "ret",
    ".size thread_cancel_syscall_cp, . - thread_cancel_syscall_cp",
    slow = const BLOCK | REQUEST,
    block = const BLOCK,
    unw_root = const UNWINDING | ROOT,
    root = const ROOT,
    canceled = const CANCELED,
);

core::arch::global_asm!(
    ".text",
    ".p2align 2",
    ".globl thread_cancel_region_enter",
    ".hidden thread_cancel_region_enter",
    ".type thread_cancel_region_enter,@function",
    "thread_cancel_region_enter:",
    // Frame: ra at 0, s0-s11 at 8..104, fs0-fs11 at 104..200, fcsr at 200; 208 bytes.
    "addi sp, sp, -208",
    "sd ra, 0(sp)",
    "sd s0, 8(sp)",
    "sd s1, 16(sp)",
    "sd s2, 24(sp)",
    "sd s3, 32(sp)",
    "sd s4, 40(sp)",
    "sd s5, 48(sp)",
    "sd s6, 56(sp)",
    "sd s7, 64(sp)",
    "sd s8, 72(sp)",
    "sd s9, 80(sp)",
    "sd s10, 88(sp)",
    "sd s11, 96(sp)",
    "fsd fs0, 104(sp)",
    "fsd fs1, 112(sp)",
    "fsd fs2, 120(sp)",
    "fsd fs3, 128(sp)",
    "fsd fs4, 136(sp)",
    "fsd fs5, 144(sp)",
    "fsd fs6, 152(sp)",
    "fsd fs7, 160(sp)",
    "fsd fs8, 168(sp)",
    "fsd fs9, 176(sp)",
    "fsd fs10, 184(sp)",
    "fsd fs11, 192(sp)",
    "frcsr t0",
    "sd t0, 200(sp)",
    "mv s1, a0",
    // Armed: from here a cancellation may leave through `thread_cancel_region_leave`.
    "sd sp, 0(s1)",
    // A request pending at entry (and enabled) leaves before `f` runs. The caller published
    // the region with a sequentially consistent store: the load is the sequentially consistent
    // one (see the module docs).
    "ld t0, 8(s1)",
    "fence rw, rw",
    "lw t1, 0(t0)",
    "fence r, rw",
    // As x86_64.rs: asynchronous, nothing blocking, a request pending: leave (ASYNC flipped to
    // a bit that must be clear).
    "xori t1, t1, {async}",
    "andi t2, t1, {ablock}",
    "bnez t2, 4f",
    "andi t2, t1, {request}",
    "bnez t2, 2f",
    "4:",
    "mv t0, a1",
    "mv a0, a2",
    "jalr t0",
    "sd zero, 0(s1)",
    "li a0, 0",
    ".globl thread_cancel_region_resume",
    ".hidden thread_cancel_region_resume",
    "thread_cancel_region_resume:",
    "ld ra, 0(sp)",
    "ld s0, 8(sp)",
    "ld s1, 16(sp)",
    "ld s2, 24(sp)",
    "ld s3, 32(sp)",
    "ld s4, 40(sp)",
    "ld s5, 48(sp)",
    "ld s6, 56(sp)",
    "ld s7, 64(sp)",
    "ld s8, 72(sp)",
    "ld s9, 80(sp)",
    "ld s10, 88(sp)",
    "ld s11, 96(sp)",
    "fld fs0, 104(sp)",
    "fld fs1, 112(sp)",
    "fld fs2, 120(sp)",
    "fld fs3, 128(sp)",
    "fld fs4, 136(sp)",
    "fld fs5, 144(sp)",
    "fld fs6, 152(sp)",
    "fld fs7, 160(sp)",
    "fld fs8, 168(sp)",
    "fld fs9, 176(sp)",
    "fld fs10, 184(sp)",
    "fld fs11, 192(sp)",
    "addi sp, sp, 208",
    "ret",
    "2:",
    "mv a0, s1",
    "j thread_cancel_region_leave",
    ".size thread_cancel_region_enter, . - thread_cancel_region_enter",
    "",
    ".p2align 2",
    ".globl thread_cancel_region_leave",
    ".hidden thread_cancel_region_leave",
    ".type thread_cancel_region_leave,@function",
    "thread_cancel_region_leave:",
    "ld sp, 0(a0)",
    "sd zero, 0(a0)",
    "ld t0, 200(sp)",
    "fscsr t0",
    "li a0, 1",
    "j thread_cancel_region_resume",
    ".size thread_cancel_region_leave, . - thread_cancel_region_leave",
    "",
    ".p2align 2",
    ".globl thread_cancel_region_act",
    ".hidden thread_cancel_region_act",
    ".type thread_cancel_region_act,@function",
    "thread_cancel_region_act:",
    // Entered from the signal handler with a0 = ctx and a 16-byte aligned stack below the
    // interrupted frame: call the region's `act(ctx)` (which never returns).
    "ld t0, 16(a0)",
    "jalr t0",
    "unimp",
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
    // SAFETY: the caller guarantees `uc` points to the kernel-provided context; `REG_PC` is an
    // index within `__gregs` (`c_ulong` is `u64` here).
    unsafe { &raw mut (*uc).uc_mcontext.__gregs[libc::REG_PC] }
}

/// Makes the interrupted thread resume in `target(arg)` (see `x86_64.rs`): the program counter
/// and a0 are replaced; with `fresh_frame`, the stack pointer moves 128 bytes down (RISC-V has
/// no red zone; the margin is kept as on the other architectures) and is aligned to 16.
///
/// # Safety
/// As [`pc`]; `target` must be code that is correct to run with these registers.
pub(crate) unsafe fn divert(uc: *mut libc::c_void, target: u64, arg: u64, fresh_frame: bool) {
    let uc = uc.cast::<libc::ucontext_t>();
    // SAFETY: the caller guarantees `uc` points to the kernel-provided context; the indices are
    // within `__gregs`.
    unsafe {
        let g = &raw mut (*uc).uc_mcontext.__gregs;
        (*g)[libc::REG_PC] = target;
        (*g)[libc::REG_A0] = arg;
        if fresh_frame {
            (*g)[libc::REG_SP] = ((*g)[libc::REG_SP] - 128) & !15;
        }
    }
}
