//! stdio as cancellation points: the exported names of `src/stdio.c` (built by `build.rs`;
//! its module comment has the design and what a canceled call did). A Rust `cdylib` exports
//! only Rust symbols, so each function here forwards to its C implementation.
//!
//! `va_list` crosses here as a pointer: on x86_64 it is an array (`__va_list_tag[1]`), passed
//! as a pointer to its first element; on aarch64 a 32-byte struct, which the procedure call
//! standard passes by reference to a copy. Either way the register holds a pointer, forwarded
//! unchanged to the C function that takes the `va_list`.
//!
//! # Safety (every function here)
//! The arguments must be valid for the stdio function of the same name.

use libc::{c_char, c_int, c_void, size_t, ssize_t, FILE};

/// A `va_list` argument, as passed (see the module docs).
type VaList = *mut c_void;

extern "C-unwind" {
    fn tc_stdio_fgetc(f: *mut FILE) -> c_int;
    fn tc_stdio_fgets(s: *mut c_char, n: c_int, f: *mut FILE) -> *mut c_char;
    fn tc_stdio_fread(p: *mut c_void, size: size_t, n: size_t, f: *mut FILE) -> size_t;
    fn tc_stdio_getdelim(
        line: *mut *mut c_char,
        cap: *mut size_t,
        delim: c_int,
        f: *mut FILE,
    ) -> ssize_t;
    fn tc_stdio_vfscanf(f: *mut FILE, fmt: *const c_char, ap: VaList) -> c_int;
    fn tc_stdio_fwrite(p: *const c_void, size: size_t, n: size_t, f: *mut FILE) -> size_t;
    fn tc_stdio_fputc(c: c_int, f: *mut FILE) -> c_int;
    fn tc_stdio_fputs(s: *const c_char, f: *mut FILE) -> c_int;
    fn tc_stdio_puts(s: *const c_char) -> c_int;
    fn tc_stdio_vfprintf(f: *mut FILE, fmt: *const c_char, ap: VaList) -> c_int;
    fn tc_stdio_vdprintf(fd: c_int, fmt: *const c_char, ap: VaList) -> c_int;
    fn tc_stdio_fflush(f: *mut FILE) -> c_int;
    fn tc_stdio_fclose(f: *mut FILE) -> c_int;
    fn tc_stdio_perror(s: *const c_char);
    fn tc_stdio_fopen(path: *const c_char, mode: *const c_char) -> *mut FILE;
    static mut stdin: *mut FILE;
    static mut stdout: *mut FILE;
}

fn stdin_file() -> *mut FILE {
    // SAFETY: glibc's `stdin` variable, read (not referenced) by value.
    unsafe { stdin }
}

fn stdout_file() -> *mut FILE {
    // SAFETY: glibc's `stdout` variable, read (not referenced) by value.
    unsafe { stdout }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_fgetc(f: *mut FILE) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_fgetc(f) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_getc(f: *mut FILE) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_fgetc(f) }
}

#[no_mangle]
pub extern "C-unwind" fn tc_getchar() -> c_int {
    // SAFETY: glibc's standard input stream.
    unsafe { tc_stdio_fgetc(stdin_file()) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_fgets(s: *mut c_char, n: c_int, f: *mut FILE) -> *mut c_char {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_fgets(s, n, f) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_fread(
    p: *mut c_void,
    size: size_t,
    n: size_t,
    f: *mut FILE,
) -> size_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_fread(p, size, n, f) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_getdelim(
    line: *mut *mut c_char,
    cap: *mut size_t,
    delim: c_int,
    f: *mut FILE,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_getdelim(line, cap, delim, f) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_getline(
    line: *mut *mut c_char,
    cap: *mut size_t,
    f: *mut FILE,
) -> ssize_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_getdelim(line, cap, c_int::from(b'\n'), f) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_vfscanf(f: *mut FILE, fmt: *const c_char, ap: VaList) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_vfscanf(f, fmt, ap) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_vscanf(fmt: *const c_char, ap: VaList) -> c_int {
    // SAFETY: the caller's arguments (module docs); glibc's standard input stream.
    unsafe { tc_stdio_vfscanf(stdin_file(), fmt, ap) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_fwrite(
    p: *const c_void,
    size: size_t,
    n: size_t,
    f: *mut FILE,
) -> size_t {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_fwrite(p, size, n, f) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_fputc(c: c_int, f: *mut FILE) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_fputc(c, f) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_putc(c: c_int, f: *mut FILE) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_fputc(c, f) }
}

#[no_mangle]
pub extern "C-unwind" fn tc_putchar(c: c_int) -> c_int {
    // SAFETY: glibc's standard output stream.
    unsafe { tc_stdio_fputc(c, stdout_file()) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_fputs(s: *const c_char, f: *mut FILE) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_fputs(s, f) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_puts(s: *const c_char) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_puts(s) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_vfprintf(f: *mut FILE, fmt: *const c_char, ap: VaList) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_vfprintf(f, fmt, ap) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_vprintf(fmt: *const c_char, ap: VaList) -> c_int {
    // SAFETY: the caller's arguments (module docs); glibc's standard output stream.
    unsafe { tc_stdio_vfprintf(stdout_file(), fmt, ap) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_vdprintf(fd: c_int, fmt: *const c_char, ap: VaList) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_vdprintf(fd, fmt, ap) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_fflush(f: *mut FILE) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_fflush(f) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_fclose(f: *mut FILE) -> c_int {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_fclose(f) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_fopen(path: *const c_char, mode: *const c_char) -> *mut FILE {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_fopen(path, mode) }
}

#[no_mangle]
pub unsafe extern "C-unwind" fn tc_perror(s: *const c_char) {
    // SAFETY: the caller's arguments (module docs).
    unsafe { tc_stdio_perror(s) }
}
