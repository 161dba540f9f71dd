//! Which frames a thread's stack holds, for a thread the library did not create: a forced
//! unwind to the end of its stack must pass only C frames, C++ frames (their destructors run,
//! as with glibc) and this library's own (plain at the points that act). A Rust frame of
//! another copy of `std` (a Rust program's `main`, its `std` threads' start) has a
//! `catch_unwind` or destructors, which a foreign unwind must not reach. Frames are told apart
//! by their personality routine, read from the unwind information (`.eh_frame`).

use super::unwind::unwinder::Context;
use std::ffi::{c_int, c_void, CStr};
use std::sync::OnceLock;

/// `struct dwarf_eh_bases` of libgcc's `unwind-dw2-fde.h`.
#[repr(C)]
struct Bases {
    tbase: usize,
    dbase: usize,
    func: usize,
}

const URC_NO_REASON: c_int = 0;
const URC_NORMAL_STOP: c_int = 4;

extern "C" {
    fn _Unwind_Backtrace(
        trace: unsafe extern "C" fn(*mut Context, *mut c_void) -> c_int,
        arg: *mut c_void,
    ) -> c_int;
    fn _Unwind_GetIPInfo(ctx: *mut Context, before: *mut c_int) -> usize;
    fn _Unwind_Find_FDE(pc: *const c_void, bases: *mut Bases) -> *const u8;
}

/// The personality routines whose frames a foreign unwind may pass: this library's own
/// Rust code, C++'s and C's (`-fexceptions` with cleanups).
fn allowed() -> &'static [usize; 3] {
    static ALLOWED: OnceLock<[usize; 3]> = OnceLock::new();
    ALLOWED.get_or_init(|| {
        let look = |name: &CStr| {
            // SAFETY: a lookup by a NUL-terminated name in the global scope.
            unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) as usize }
        };
        [
            own_personality().unwrap_or(0),
            look(c"__gxx_personality_v0"),
            look(c"__gcc_personality_v0"),
        ]
    })
}

/// A function of ours with a landing pad, whose unwind information names our personality.
#[inline(never)]
fn probe() {
    struct Guard;
    impl Drop for Guard {
        fn drop(&mut self) {
            std::hint::black_box(());
        }
    }
    let _g = Guard;
    let f: fn() = std::hint::black_box(|| {});
    f();
}

fn own_personality() -> Option<usize> {
    // SAFETY: `probe` is a function of this library: its address is inside its code.
    unsafe { personality_at(probe as *const () as usize + 1) }
        .ok()
        .flatten()
}

/// Whether every frame of the calling thread's stack, up to where the unwind information
/// ends, has no personality routine or an allowed one.
pub(super) fn only_c_frames() -> bool {
    allowed(); // looked up before the walk (`dlsym`), once per process
    let mut ok = true;
    // SAFETY: `trace` gets `ok` back as its argument, for the duration of the walk.
    unsafe { _Unwind_Backtrace(trace, (&raw mut ok).cast()) };
    return ok;

    unsafe extern "C" fn trace(ctx: *mut Context, arg: *mut c_void) -> c_int {
        let mut before = 0;
        // SAFETY: `ctx` is the unwinder's context for this frame.
        let ip = unsafe { _Unwind_GetIPInfo(ctx, &mut before) };
        if ip == 0 {
            return URC_NO_REASON;
        }
        // The call's return address may be the next function's first byte.
        let pc = if before == 0 { ip - 1 } else { ip };
        // SAFETY: `pc` is a code address of a live frame.
        let fine = match unsafe { personality_at(pc) } {
            Ok(None) => true,
            Ok(Some(p)) => p != 0 && allowed().contains(&p),
            Err(()) => false,
        };
        if fine {
            URC_NO_REASON
        } else {
            // SAFETY: `arg` is the `ok` of `only_c_frames`.
            unsafe { *arg.cast::<bool>() = false };
            URC_NORMAL_STOP
        }
    }
}

/// The personality routine of the code at `pc` (`Ok(None)`: none, or no unwind
/// information); `Err` for unwind information this reader does not understand.
///
/// # Safety
/// `pc` must be inside code mapped in the process.
unsafe fn personality_at(pc: usize) -> Result<Option<usize>, ()> {
    let mut bases = Bases {
        tbase: 0,
        dbase: 0,
        func: 0,
    };
    // SAFETY: libgcc looks `pc` up in the registered unwind information.
    let fde = unsafe { _Unwind_Find_FDE(pc as *const c_void, &mut bases) };
    if fde.is_null() {
        return Ok(None);
    }
    // SAFETY: `fde` points to a frame description entry in `.eh_frame`, mapped with its
    // object; the reads below stay inside it and its CIE (the format's own lengths).
    unsafe {
        if read::<u32>(fde) == u32::MAX {
            return Err(()); // 64-bit DWARF: not produced for x86_64/aarch64 code
        }
        let cie_field = fde.add(4);
        let cie = cie_field.sub(read::<u32>(cie_field) as usize);
        if read::<u32>(cie) == u32::MAX {
            return Err(());
        }
        let version = *cie.add(8);
        let aug = CStr::from_ptr(cie.add(9).cast());
        let mut p = cie.add(9 + aug.to_bytes().len() + 1);
        let aug = aug.to_bytes();
        if aug.is_empty() {
            return Ok(None);
        }
        if aug[0] != b'z' {
            return Err(());
        }
        p = leb(p).0; // code alignment
        p = leb(p).0; // data alignment
        p = if version == 1 { p.add(1) } else { leb(p).0 }; // return address register
        p = leb(p).0; // augmentation data length
        for &c in &aug[1..] {
            match c {
                b'P' => return encoded(p.add(1), *p, &bases).map(Some),
                b'L' | b'R' => p = p.add(1),
                b'S' | b'B' => {}
                _ => return Err(()),
            }
        }
        Ok(None)
    }
}

/// # Safety
/// `p` valid for reading a `T`.
unsafe fn read<T: Copy>(p: *const u8) -> T {
    // SAFETY: forwarded.
    unsafe { p.cast::<T>().read_unaligned() }
}

/// A LEB128 number: the address after it and its raw bits.
///
/// # Safety
/// `p` must point to a LEB128 number.
unsafe fn leb(mut p: *const u8) -> (*const u8, u64) {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        // SAFETY: forwarded: the number goes on while the high bit is set.
        let b = unsafe { *p };
        // SAFETY: as above.
        p = unsafe { p.add(1) };
        if shift < 64 {
            v |= u64::from(b & 0x7f) << shift;
        }
        shift += 7;
        if b & 0x80 == 0 {
            return (p, v);
        }
    }
}

/// A pointer in the `DW_EH_PE_*` encoding `enc`, at `p`.
///
/// # Safety
/// `p` must point to such a pointer; an indirect one must point to a readable word.
unsafe fn encoded(p: *const u8, enc: u8, bases: &Bases) -> Result<usize, ()> {
    if enc == 0xff {
        return Ok(0); // DW_EH_PE_omit
    }
    let base = match enc & 0x70 {
        0x00 => 0,
        0x10 => p as usize,
        0x20 => bases.tbase,
        0x30 => bases.dbase,
        _ => return Err(()),
    };
    // SAFETY: forwarded: `p` holds a value of the encoding's size.
    let v = unsafe {
        match enc & 0x0f {
            0x00 | 0x04 | 0x0c => read::<u64>(p) as usize,
            0x03 => read::<u32>(p) as usize,
            0x0b => read::<i32>(p) as isize as usize,
            0x02 => usize::from(read::<u16>(p)),
            0x0a => read::<i16>(p) as isize as usize,
            _ => return Err(()),
        }
    };
    let a = base.wrapping_add(v);
    if enc & 0x80 != 0 {
        // SAFETY: an indirect pointer points to a word holding the address (a GOT entry).
        Ok(unsafe { read::<usize>(a as *const u8) })
    } else {
        Ok(a)
    }
}
