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
//!
//! Every function carries CFI but `thread_cancel_region_act` (deliberately none, as on x86_64),
//! so that a backtrace or an unwind started inside a region walks through to the thread's root.

use super::syscall_cp::CANCELED;
use crate::word::{ASYNC, BLOCK, REQUEST, ROOT, UNWINDING};

core::arch::global_asm!(
    ".text",
    ".p2align 2",
    // The same with the last two arguments zero (x86_64 needs this entry to keep every
    // argument in a register; here it only zeroes them).
    ".globl thread_cancel_syscall_cp4",
    ".hidden thread_cancel_syscall_cp4",
    ".type thread_cancel_syscall_cp4,@function",
    "thread_cancel_syscall_cp4:",
    // Leaves: the stack pointer never moves and the return address stays in ra, which is what
    // `.cfi_startproc` says (CFA = sp).
    ".cfi_startproc",
    "li a6, 0",
    "li a7, 0",
    "j thread_cancel_syscall_cp",
    ".cfi_endproc",
    ".size thread_cancel_syscall_cp4, . - thread_cancel_syscall_cp4",
    ".p2align 2",
    ".globl thread_cancel_syscall_cp",
    ".hidden thread_cancel_syscall_cp",
    ".type thread_cancel_syscall_cp,@function",
    "thread_cancel_syscall_cp:",
    ".cfi_startproc",
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
    ".cfi_endproc",
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
    // Frame: ra at 0, s0-s11 at 8..104, fs0-fs11 at 104..200, fcsr at 200; 208 bytes
    // (CFA = sp + 208 once the first instruction ran). The CFI records every save, so an
    // unwinder (a backtrace, a panic's or a cancellation's unwind) started inside `f` walks
    // through.
    ".cfi_startproc",
    "addi sp, sp, -208",
    ".cfi_def_cfa_offset 208",
    "sd ra, 0(sp)",
    ".cfi_offset ra, -208",
    "sd s0, 8(sp)",
    ".cfi_offset s0, -200",
    "sd s1, 16(sp)",
    ".cfi_offset s1, -192",
    "sd s2, 24(sp)",
    ".cfi_offset s2, -184",
    "sd s3, 32(sp)",
    ".cfi_offset s3, -176",
    "sd s4, 40(sp)",
    ".cfi_offset s4, -168",
    "sd s5, 48(sp)",
    ".cfi_offset s5, -160",
    "sd s6, 56(sp)",
    ".cfi_offset s6, -152",
    "sd s7, 64(sp)",
    ".cfi_offset s7, -144",
    "sd s8, 72(sp)",
    ".cfi_offset s8, -136",
    "sd s9, 80(sp)",
    ".cfi_offset s9, -128",
    "sd s10, 88(sp)",
    ".cfi_offset s10, -120",
    "sd s11, 96(sp)",
    ".cfi_offset s11, -112",
    "fsd fs0, 104(sp)",
    ".cfi_offset fs0, -104",
    "fsd fs1, 112(sp)",
    ".cfi_offset fs1, -96",
    "fsd fs2, 120(sp)",
    ".cfi_offset fs2, -88",
    "fsd fs3, 128(sp)",
    ".cfi_offset fs3, -80",
    "fsd fs4, 136(sp)",
    ".cfi_offset fs4, -72",
    "fsd fs5, 144(sp)",
    ".cfi_offset fs5, -64",
    "fsd fs6, 152(sp)",
    ".cfi_offset fs6, -56",
    "fsd fs7, 160(sp)",
    ".cfi_offset fs7, -48",
    "fsd fs8, 168(sp)",
    ".cfi_offset fs8, -40",
    "fsd fs9, 176(sp)",
    ".cfi_offset fs9, -32",
    "fsd fs10, 184(sp)",
    ".cfi_offset fs10, -24",
    "fsd fs11, 192(sp)",
    ".cfi_offset fs11, -16",
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
    ".cfi_remember_state",
    "ld ra, 0(sp)",
    ".cfi_restore ra",
    "ld s0, 8(sp)",
    ".cfi_restore s0",
    "ld s1, 16(sp)",
    ".cfi_restore s1",
    "ld s2, 24(sp)",
    ".cfi_restore s2",
    "ld s3, 32(sp)",
    ".cfi_restore s3",
    "ld s4, 40(sp)",
    ".cfi_restore s4",
    "ld s5, 48(sp)",
    ".cfi_restore s5",
    "ld s6, 56(sp)",
    ".cfi_restore s6",
    "ld s7, 64(sp)",
    ".cfi_restore s7",
    "ld s8, 72(sp)",
    ".cfi_restore s8",
    "ld s9, 80(sp)",
    ".cfi_restore s9",
    "ld s10, 88(sp)",
    ".cfi_restore s10",
    "ld s11, 96(sp)",
    ".cfi_restore s11",
    "fld fs0, 104(sp)",
    ".cfi_restore fs0",
    "fld fs1, 112(sp)",
    ".cfi_restore fs1",
    "fld fs2, 120(sp)",
    ".cfi_restore fs2",
    "fld fs3, 128(sp)",
    ".cfi_restore fs3",
    "fld fs4, 136(sp)",
    ".cfi_restore fs4",
    "fld fs5, 144(sp)",
    ".cfi_restore fs5",
    "fld fs6, 152(sp)",
    ".cfi_restore fs6",
    "fld fs7, 160(sp)",
    ".cfi_restore fs7",
    "fld fs8, 168(sp)",
    ".cfi_restore fs8",
    "fld fs9, 176(sp)",
    ".cfi_restore fs9",
    "fld fs10, 184(sp)",
    ".cfi_restore fs10",
    "fld fs11, 192(sp)",
    ".cfi_restore fs11",
    "addi sp, sp, 208",
    ".cfi_def_cfa_offset 0",
    "ret",
    // Still the whole frame (the state before the epilogue).
    ".cfi_restore_state",
    "2:",
    "mv a0, s1",
    "j thread_cancel_region_leave",
    ".cfi_endproc",
    ".size thread_cancel_region_enter, . - thread_cancel_region_enter",
    "",
    ".p2align 2",
    ".globl thread_cancel_region_leave",
    ".hidden thread_cancel_region_leave",
    ".type thread_cancel_region_leave,@function",
    "thread_cancel_region_leave:",
    // Entered by a jump (from `enter`, or from the signal handler's edit of the context) with
    // a0 = ctx, on any stack: until sp is reset, the frame is `enter`'s at ctx.sp, so
    // CFA = [a0] + 208 (DW_CFA_def_cfa_expression: DW_OP_breg10 0, DW_OP_deref,
    // DW_OP_plus_uconst 208), with `enter`'s saves. Its caller is `enter`'s: the abandoned
    // frames are skipped.
    ".cfi_startproc",
    ".cfi_escape 0x0f, 0x06, 0x7a, 0x00, 0x06, 0x23, 0xd0, 0x01",
    ".cfi_offset ra, -208",
    ".cfi_offset s0, -200",
    ".cfi_offset s1, -192",
    ".cfi_offset s2, -184",
    ".cfi_offset s3, -176",
    ".cfi_offset s4, -168",
    ".cfi_offset s5, -160",
    ".cfi_offset s6, -152",
    ".cfi_offset s7, -144",
    ".cfi_offset s8, -136",
    ".cfi_offset s9, -128",
    ".cfi_offset s10, -120",
    ".cfi_offset s11, -112",
    ".cfi_offset fs0, -104",
    ".cfi_offset fs1, -96",
    ".cfi_offset fs2, -88",
    ".cfi_offset fs3, -80",
    ".cfi_offset fs4, -72",
    ".cfi_offset fs5, -64",
    ".cfi_offset fs6, -56",
    ".cfi_offset fs7, -48",
    ".cfi_offset fs8, -40",
    ".cfi_offset fs9, -32",
    ".cfi_offset fs10, -24",
    ".cfi_offset fs11, -16",
    "ld sp, 0(a0)",
    // From here (ctx.sp is cleared next) the frame is found from sp, as in `enter`.
    ".cfi_def_cfa sp, 208",
    "sd zero, 0(a0)",
    "ld t0, 200(sp)",
    "fscsr t0",
    "li a0, 1",
    "j thread_cancel_region_resume",
    ".cfi_endproc",
    ".size thread_cancel_region_leave, . - thread_cancel_region_leave",
    "",
    ".p2align 2",
    ".globl thread_cancel_region_act",
    ".hidden thread_cancel_region_act",
    ".type thread_cancel_region_act,@function",
    "thread_cancel_region_act:",
    // Entered from the signal handler with a0 = ctx and a 16-byte aligned stack below the
    // interrupted frame: call the region's `act(ctx)` (which never returns). Deliberately no
    // CFI, as on x86_64: the interrupted frame cannot be unwound (ra is not its return
    // address), so a C forced unwind from `act` ends here (ARCHITECTURE.md, "The C ABI").
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
