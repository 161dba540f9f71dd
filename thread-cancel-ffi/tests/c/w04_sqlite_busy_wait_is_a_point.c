/* W04 with a real C library: a thread whose sqlite3 query waits for a database locked by
 * another connection (sqlite's busy handler sleeps in the C library's usleep or nanosleep,
 * inside libsqlite3.so, built without the compatibility header) is canceled as with glibc, long
 * before the 30 s busy timeout: joined with PTHREAD_CANCELED, its cleanup handler ran (closing
 * its connection), and the database is usable again.
 *
 * And inside a scope (this library's tc_scope_run, not in glibc: checked, not printed): a scope's
 * cancel fails the sleeps of sqlite's busy handler at once (it ignores their result), so the
 * query ends with SQLITE_BUSY soon after the cancel, without waiting out its timeout nor
 * unwinding sqlite's frames (its locks held); the run acts at the program's next own point
 * and returns ECANCELED, and the database is not left locked.
 *
 * TC_COMPARE_WITH_GLIBC: built through pthread_compat.h with libthread_cancel and against the
 * system's glibc alone; both print the same lines. Through the header, before the library
 * defined the C library's blocking functions, the thread went on until the busy timeout.
 *
 * TC_LINK: -lsqlite3 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "tc_test.h"

#ifdef __SANITIZE_ADDRESS__
/* A thread canceled inside sqlite3_exec leaves what sqlite allocated for the statement's
 * journal behind (2,792 bytes here, the same with plain glibc built with ASan): sqlite is not
 * written to be canceled. LeakSanitizer is told so; any other leak still fails the program. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libsqlite3.so\n"; }
#endif

static char path[64];
static atomic_int started, handlers;
static atomic_int tid;

static void close_db(void *db) {
    /* A canceled sqlite3_exec leaves its statement prepared: finalized here, as any program
     * that cancels inside sqlite must (with glibc too). */
    sqlite3_stmt *st;
    while ((st = sqlite3_next_stmt(db, NULL)) != NULL) sqlite3_finalize(st);
    CHECK(sqlite3_close(db) == SQLITE_OK);
    atomic_fetch_add(&handlers, 1);
}

static void *query(void *arg) {
    (void)arg;
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    sqlite3_busy_timeout(db, 30000);
    int rc = SQLITE_OK;
    pthread_cleanup_push(close_db, db);
    atomic_store(&tid, test_gettid());
    atomic_store(&started, 1);
    rc = sqlite3_exec(db, "INSERT INTO t VALUES (2)", NULL, NULL, NULL);
    pthread_cleanup_pop(1);
    return rc == SQLITE_BUSY ? "busy" : "done";
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

#ifndef TC_PLAIN_GLIBC
#include <thread_cancel.h>

static tc_scope_t *scope;
static atomic_int query_rc;
static double busy_after;

static void *scoped_query(void *arg) {
    (void)arg;
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    sqlite3_busy_timeout(db, 30000);
    atomic_store(&tid, test_gettid());
    atomic_store(&started, 1);
    atomic_store(&query_rc, sqlite3_exec(db, "INSERT INTO t VALUES (3)", NULL, NULL, NULL));
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    busy_after = (double)t.tv_sec + (double)t.tv_nsec / 1e9;
    CHECK(sqlite3_close(db) == SQLITE_OK); /* nothing of the query is left */
    pthread_testcancel();                  /* the program's own point: the run acts here */
    return NULL;
}

static void *in_scope(void *arg) {
    (void)arg;
    void *ret;
    return (void *)(long)tc_scope_run(scope, scoped_query, NULL, &ret);
}
#endif

int main(void) {
    alarm(60);
    snprintf(path, sizeof path, "/tmp/tc-w04-sqlite-%d.db", (int)getpid());
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "CREATE TABLE t (x); BEGIN EXCLUSIVE; INSERT INTO t VALUES (1)", NULL,
                       NULL, NULL) == SQLITE_OK);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, query, NULL) == 0);
    test_wait_ge(&started, 1);
    test_wait_blocked(atomic_load(&tid)); /* in the busy handler's sleep */
    double t0 = now();
    CHECK(pthread_cancel(t) == 0);
    void *r;
    CHECK(pthread_join(t, &r) == 0);
    double took = now() - t0;
    printf("a query waiting on a locked database: %s, cleanup handler %d, before the busy "
           "timeout: %s\n",
           r == PTHREAD_CANCELED ? "canceled" : (char *)r, atomic_load(&handlers),
           took < 20 ? "yes" : "no");
#ifndef TC_PLAIN_GLIBC
    atomic_store(&started, 0);
    scope = tc_scope_new();
    CHECK(scope != NULL);
    CHECK(pthread_create(&t, NULL, in_scope, NULL) == 0);
    test_wait_ge(&started, 1);
    test_wait_blocked(atomic_load(&tid));
    t0 = now();
    CHECK(tc_scope_cancel(scope) == 0);
    CHECK(pthread_join(t, &r) == 0);
    fprintf(stderr, "in a scope: the query returned %d (SQLITE_BUSY %d) %.3f s after the cancel, "
            "the run returned %s\n",
            atomic_load(&query_rc), SQLITE_BUSY, busy_after - t0,
            (long)r == ECANCELED ? "ECANCELED" : "something else");
    CHECK(atomic_load(&query_rc) == SQLITE_BUSY && (long)r == ECANCELED && busy_after - t0 < 20);
    tc_scope_free(scope);
#endif
    CHECK(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_stmt *st;
    CHECK(sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, NULL) == SQLITE_OK);
    CHECK(sqlite3_step(st) == SQLITE_ROW);
    printf("the database afterwards: %d row(s)\n", sqlite3_column_int(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
    unlink(path);
    return 0;
}
