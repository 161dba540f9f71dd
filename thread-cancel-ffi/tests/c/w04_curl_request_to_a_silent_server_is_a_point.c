/* W04 with a real C library: a thread in libcurl's curl_easy_perform against a local server that
 * accepts the connection and never answers (libcurl waits in the C library's poll inside
 * libcurl.so, built without the compatibility header; its own timeout is 30 s) is canceled as
 * with glibc, long before that timeout: joined with PTHREAD_CANCELED, its cleanup handler ran.
 *
 * TC_COMPARE_WITH_GLIBC: built through pthread_compat.h with libthread_cancel and against the
 * system's glibc alone; both print the same lines. Through the header, before the library
 * defined the C library's blocking functions, the thread went on until curl's own timeout.
 *
 * TC_LINK: -lcurl */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>
#include "tc_test.h"

#ifdef __SANITIZE_ADDRESS__
/* A thread canceled inside curl_easy_perform leaves the transfer's state behind (curl is not
 * written to be canceled; the same with plain glibc). Any other leak still fails. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libcurl.so\n"; }
#endif

static char url[64];
static atomic_int started, handlers, tid;

static void handler(void *arg) {
    (void)arg;
    atomic_fetch_add(&handlers, 1);
}

static void *fetch(void *arg) {
    (void)arg;
    CURL *c = curl_easy_init();
    CHECK(c != NULL);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 30L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    CURLcode rc = CURLE_OK;
    pthread_cleanup_push(handler, NULL);
    atomic_store(&tid, test_gettid());
    atomic_store(&started, 1);
    rc = curl_easy_perform(c);
    pthread_cleanup_pop(0);
    curl_easy_cleanup(c);
    return rc == CURLE_OPERATION_TIMEDOUT ? "timed out" : "returned";
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void) {
    alarm(60);
    CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK);
    int srv = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(srv >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    CHECK(bind(srv, (struct sockaddr *)&a, sizeof a) == 0 && listen(srv, 4) == 0);
    socklen_t len = sizeof a;
    CHECK(getsockname(srv, (struct sockaddr *)&a, &len) == 0);
    snprintf(url, sizeof url, "http://127.0.0.1:%d/", ntohs(a.sin_port));
    pthread_t t;
    CHECK(pthread_create(&t, NULL, fetch, NULL) == 0);
    int conn = accept(srv, NULL, NULL); /* the request is sent; no answer ever comes */
    CHECK(conn >= 0);
    test_wait_ge(&started, 1);
    test_wait_blocked(atomic_load(&tid));
    double t0 = now();
    CHECK(pthread_cancel(t) == 0);
    void *r;
    CHECK(pthread_join(t, &r) == 0);
    double took = now() - t0;
    printf("curl_easy_perform against a silent server: %s, cleanup handler %d, before curl's "
           "own timeout: %s\n",
           r == PTHREAD_CANCELED ? "canceled" : (char *)r, atomic_load(&handlers),
           took < 20 ? "yes" : "no");
    close(conn);
    close(srv);
    curl_global_cleanup();
    return 0;
}
