//! `system` as a cancellation point (not on Android, whose C library lacks the `posix_spawn`
//! bindings this uses).

use crate::syscalls::table::waitpid as tc_waitpid;
use libc::{c_int, c_void};

/// `system`'s shared state, as glibc keeps it: the SIGINT and SIGQUIT actions of before the
/// first of the concurrent calls (the calls ignore both while a shell runs), and how many run.
struct SystemState {
    running: usize,
    intr: libc::sigaction,
    quit: libc::sigaction,
}

// SAFETY: `sigaction` is plain data (a handler address, flags, a mask); sending it to another
// thread is sound.
unsafe impl Send for SystemState {}

static SYSTEM: std::sync::Mutex<Option<SystemState>> = std::sync::Mutex::new(None);

fn system_state() -> std::sync::MutexGuard<'static, Option<SystemState>> {
    crate::lock(&SYSTEM)
}

/// The end of a `system` call: the last one running restores SIGINT's and SIGQUIT's actions.
fn system_leave() {
    let mut g = system_state();
    if let Some(s) = g.as_mut() {
        s.running -= 1;
        if s.running == 0 {
            // SAFETY: restores actions `sigaction` reported before.
            unsafe {
                libc::sigaction(libc::SIGINT, &s.intr, std::ptr::null_mut());
                libc::sigaction(libc::SIGQUIT, &s.quit, std::ptr::null_mut());
            }
            *g = None;
        }
    }
}

/// What the cleanup handler of a canceled `system` needs: the shell, and the caller's mask of
/// before the call.
struct Running {
    pid: libc::pid_t,
    omask: libc::sigset_t,
}

/// The cleanup handler of a canceled `system`: as glibc, the shell is killed (SIGKILL) and
/// reaped, so no child outlives the canceled call, and the signal actions are restored; and
/// the thread's mask is the caller's again (SIGCHLD no longer blocked), for a thread that goes
/// on after a scope's cancel (as it was before the run).
unsafe extern "C-unwind" fn system_canceled(arg: *mut c_void) {
    // SAFETY: `arg` is the `Running` of the canceled `tc_system`, whose frame is intact while
    // its cleanup handlers run.
    let r = unsafe { &*arg.cast::<Running>() };
    // SAFETY: our own child, not yet reaped (the canceled wait reaped nothing).
    unsafe {
        libc::kill(r.pid, libc::SIGKILL);
        while libc::waitpid(r.pid, std::ptr::null_mut(), 0) < 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
        {}
    }
    system_leave();
    // SAFETY: restores the caller's mask (which never blocks the cancel signal).
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &r.omask, std::ptr::null_mut()) };
}

extern "C" {
    static environ: *const *mut libc::c_char;
}

/// `system`: runs `sh -c cmd` and waits for it in a cancellation point (`tc_waitpid`), as
/// glibc does: SIGINT and SIGQUIT are ignored and SIGCHLD blocked while it runs; a canceled
/// call kills the shell (SIGKILL) and reaps it before the cleanup handlers of the caller run.
/// A null `cmd` asks whether a shell is available (nonzero if so). A shell that cannot be
/// started is reported as one that exited with status 127.
#[no_mangle]
pub unsafe extern "C-unwind" fn tc_system(cmd: *const libc::c_char) -> c_int {
    if cmd.is_null() {
        // SAFETY: a literal command.
        return c_int::from(unsafe { tc_system(c"exit 0".as_ptr()) } == 0);
    }
    // SAFETY: sigaction and sigset_t are plain data; all-zero values are valid.
    let mut ign: libc::sigaction = unsafe { std::mem::zeroed() };
    ign.sa_sigaction = libc::SIG_IGN;
    {
        let mut g = system_state();
        match g.as_mut() {
            Some(s) => s.running += 1,
            None => {
                // SAFETY: as above.
                let (mut intr, mut quit) = unsafe { (std::mem::zeroed(), std::mem::zeroed()) };
                // SAFETY: valid signals and actions; the old ones are written to locals.
                unsafe {
                    libc::sigaction(libc::SIGINT, &ign, &mut intr);
                    libc::sigaction(libc::SIGQUIT, &ign, &mut quit);
                }
                *g = Some(SystemState {
                    running: 1,
                    intr,
                    quit,
                });
            }
        }
    }
    let (intr_ignored, quit_ignored) = {
        let g = system_state();
        let s = g.as_ref().expect("set above");
        (
            s.intr.sa_sigaction == libc::SIG_IGN,
            s.quit.sa_sigaction == libc::SIG_IGN,
        )
    };
    // SAFETY: plain data, initialised by the calls below before use.
    let (mut chld, mut omask, mut reset): (libc::sigset_t, libc::sigset_t, libc::sigset_t) =
        unsafe { (std::mem::zeroed(), std::mem::zeroed(), std::mem::zeroed()) };
    // SAFETY: the sets are locals; the signals valid.
    unsafe {
        libc::sigemptyset(&mut chld);
        libc::sigaddset(&mut chld, libc::SIGCHLD);
        libc::pthread_sigmask(libc::SIG_BLOCK, &chld, &mut omask);
        libc::sigemptyset(&mut reset);
        if !intr_ignored {
            libc::sigaddset(&mut reset, libc::SIGINT);
        }
        if !quit_ignored {
            libc::sigaddset(&mut reset, libc::SIGQUIT);
        }
    }
    // SAFETY: all-zero is a valid value before `posix_spawnattr_init`.
    let mut attr: libc::posix_spawnattr_t = unsafe { std::mem::zeroed() };
    let argv = [
        c"sh".as_ptr() as *mut libc::c_char,
        c"-c".as_ptr() as *mut libc::c_char,
        cmd as *mut libc::c_char,
        std::ptr::null_mut(),
    ];
    let mut pid: libc::pid_t = 0;
    // SAFETY: `attr`, the sets and `argv` are locals alive for the calls; `cmd` is the
    // caller's string; `environ` is the process environment.
    let spawned = unsafe {
        libc::posix_spawnattr_init(&mut attr);
        libc::posix_spawnattr_setsigmask(&mut attr, &omask);
        libc::posix_spawnattr_setsigdefault(&mut attr, &reset);
        libc::posix_spawnattr_setflags(
            &mut attr,
            (libc::POSIX_SPAWN_SETSIGDEF | libc::POSIX_SPAWN_SETSIGMASK) as libc::c_short,
        );
        let r = libc::posix_spawn(
            &mut pid,
            c"/bin/sh".as_ptr(),
            std::ptr::null(),
            &attr,
            argv.as_ptr(),
            environ,
        );
        libc::posix_spawnattr_destroy(&mut attr);
        r
    };
    let mut status: c_int;
    if spawned == 0 {
        status = 0;
        let mut running = Running { pid, omask };
        // SAFETY: all-zero is a valid buffer before the push writes it.
        let mut buf: crate::cleanup::CleanupBuffer = unsafe { std::mem::zeroed() };
        // SAFETY: `buf` lives in this frame until the pop below; a cancellation in the wait
        // runs the handler on this intact frame (before the region is left).
        unsafe {
            crate::cleanup::tc_cleanup_push_buffer(
                &mut buf,
                Some(system_canceled),
                (&raw mut running).cast(),
            )
        };
        loop {
            // SAFETY: `status` is a local.
            let r = unsafe { tc_waitpid(pid, &mut status, 0) };
            if r == pid {
                break;
            }
            if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            status = -1;
            break;
        }
        // SAFETY: the buffer pushed above, still the top.
        unsafe { crate::cleanup::tc_cleanup_pop_buffer(&mut buf, 0) };
    } else {
        status = 127 << 8; // as if the shell had called _exit(127)
    }
    system_leave();
    // SAFETY: restores the caller's mask (which never blocks the cancel signal).
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &omask, std::ptr::null_mut()) };
    status
}
