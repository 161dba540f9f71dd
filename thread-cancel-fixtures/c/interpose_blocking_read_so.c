/* interpose_blocking_read.c under other names, built by this crate's build.rs into a shared object
 * (libinterpose_test_so.so) linked into the test programs: its calls of `read` & co. are
 * resolved by the dynamic linker at load, not by the static link. */
#define interpose_test_c_read_one interpose_test_so_read_one
#define interpose_test_c_glibc_cancels interpose_test_so_glibc_cancels
#define interpose_test_c_vfork_exec interpose_test_so_vfork_exec
#define interpose_test_c_clone_exec interpose_test_so_clone_exec
#include "interpose_blocking_read.c"
