/*
 * What the datagrams of an RC ping-pong cost on this machine's kernel UDP path, in C, with nothing of RDMA: the lower
 * bound for any RoCE implementation over UDP sockets (jhca's rxe, or another), against which `hwlab perf`'s latency
 * floors can be read.
 *
 * Two threads on the loopback addresses 127.0.0.1 and 127.0.0.2, non-blocking connected UDP sockets, both ends
 * busy-polling (as the rxe engine and hwlab's floors do). One round trip per iteration, three ways:
 *   plain    one datagram each way: hwlab's "UDP floor".
 *   acks     the datagrams RC moves: a request each way, and for every request received a 20-byte ACK back before the
 *            answer (IBTA 9.7.5: the responder acknowledges; perftest's latency loops wait for every completion), one
 *            send or receive call per datagram: hwlab's "UDP floor with RoCE's ACKs".
 *   batched  the same datagrams, the ACK and the answer leaving in one sendmmsg and the pair taken with recvmmsg where
 *            both are waiting: what batching system calls could save an RC implementation.
 *   gso      the same datagrams, the two leaving as one UDP GSO send (UDP_SEGMENT, the longer first) to a socket with
 *            UDP_GRO, which takes them whole with their segment size (recvmsg): one trip through the stack for both,
 *            what jhca's rxe does on loopback.
 *   gso_mmsg as gso, each datagram taken by recvmmsg of up to 8 with the senders' addresses, as a batching receiver
 *            does: what the receive call alone costs (jhca's rxe takes the first datagram after a quiet spell by
 *            recvmsg, then batches).
 * Reported as perftest reports latency, half the round trip: the median (t_typical) and the mean of the measured
 * iterations after WARMUP unmeasured ones, and each mode's median as a multiple of the plain one's.
 *
 * Usage: udp_rc_floor [ITERS [SIZE [WARMUP]]]   (defaults 20000, 2, 20000)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <linux/udp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "udp_sockets.h"

#define ACK_SIZE 20 /* BTH 12 + AETH 4 + ICRC 4 */
#define MAX_SIZE 4096

enum mode { PLAIN, ACKS, BATCHED, GSO, GSO_MMSG };
static const char *const names[] = {"plain", "acks", "batched", "gso", "gso_mmsg"};

struct side {
    int fd;
    enum mode mode;
    int size;
    long total;
};

/* One datagram, or the segments of one that came coalesced: how many it held, or -1. */
static int take_whole(int fd, char *buf, size_t room) {
    char control[CMSG_SPACE(sizeof(int))];
    struct iovec io = {buf, room};
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    ssize_t len = recvmsg(fd, &m, MSG_DONTWAIT);
    return len < 0 ? -1 : segments(&m, (size_t) len);
}

/*
 * As take_whole, by recvmmsg of up to 8 with the senders' addresses: how many segments came, or -1. The headers are
 * laid out once per thread and only the lengths the kernel wrote are reset, as a batching receiver keeps them.
 */
static int take_whole_mmsg(int fd, char (*buf)[MAX_SIZE]) {
    enum { VLEN = 8 };
    static __thread struct mmsghdr m[VLEN];
    static __thread struct iovec io[VLEN];
    static __thread struct sockaddr_in from[VLEN];
    static __thread char control[VLEN][CMSG_SPACE(sizeof(int))];
    static __thread int laid_out;
    if (!laid_out) {
        for (int i = 0; i < VLEN; i++) {
            io[i] = (struct iovec) {buf[i & 1], MAX_SIZE};
            m[i].msg_hdr = (struct msghdr) {.msg_name = &from[i], .msg_namelen = sizeof from[i], .msg_iov = &io[i],
                    .msg_iovlen = 1, .msg_control = control[i], .msg_controllen = sizeof control[i]};
        }
        laid_out = 1;
    }
    int r = recvmmsg(fd, m, VLEN, MSG_DONTWAIT, NULL);
    int taken = 0;
    for (int i = 0; i < r; i++) {
        taken += segments(&m[i].msg_hdr, m[i].msg_len);
        m[i].msg_hdr.msg_namelen = sizeof from[i];
        m[i].msg_hdr.msg_controllen = sizeof control[i];
    }
    return r < 0 ? -1 : taken;
}

/* Busy-polls until n datagrams have been taken: recv one at a time, recvmmsg all that are waiting, or (gso) whole. */
static void take(int fd, int n, int batched) {
    static __thread char buf[2][MAX_SIZE];
    while (n > 0) {
        int r;
        if (batched == GSO_MMSG) {
            r = take_whole_mmsg(fd, buf);
        } else if (batched == GSO) {
            r = take_whole(fd, (char *) buf, sizeof buf);
        } else if (batched) {
            struct iovec io[2] = {{buf[0], MAX_SIZE}, {buf[1], MAX_SIZE}};
            struct mmsghdr m[2];
            memset(m, 0, sizeof m);
            for (int i = 0; i < 2; i++) {
                m[i].msg_hdr.msg_iov = &io[i];
                m[i].msg_hdr.msg_iovlen = 1;
            }
            r = recvmmsg(fd, m, n, MSG_DONTWAIT, NULL);
        } else {
            r = recv(fd, buf[0], MAX_SIZE, MSG_DONTWAIT) >= 0 ? 1 : -1;
        }
        if (r > 0) {
            n -= r;
        } else if (errno != EAGAIN) {
            perror("udp_rc_floor: receive");
            exit(1);
        }
    }
}

/* Sends an ACK (if ack) and then a message of size bytes (if size >= 0): one call each, one sendmmsg, or one GSO. */
static void put(int fd, int ack, int size, int batched) {
    static __thread char buf[MAX_SIZE];
    struct iovec io[2];
    struct mmsghdr m[2];
    int n = 0;
    if (ack) {
        io[n].iov_base = buf;
        io[n++].iov_len = ACK_SIZE;
    }
    if (size >= 0) {
        io[n].iov_base = buf;
        io[n++].iov_len = (size_t) size;
    }
    if ((batched == GSO || batched == GSO_MMSG) && n == 2) {
        put_coalesced(fd, io);
        return;
    }
    if (batched && n == 2) {
        memset(m, 0, sizeof m);
        for (int i = 0; i < 2; i++) {
            m[i].msg_hdr.msg_iov = &io[i];
            m[i].msg_hdr.msg_iovlen = 1;
        }
        if (sendmmsg(fd, m, 2, 0) != 2) {
            perror("udp_rc_floor: sendmmsg");
            exit(1);
        }
        return;
    }
    for (int i = 0; i < n; i++) {
        if (send(fd, io[i].iov_base, io[i].iov_len, 0) < 0) {
            perror("udp_rc_floor: send");
            exit(1);
        }
    }
}

/* The server: takes the request (and the ACK of its previous answer), sends the ACK and the answer. */
static void *serve(void *arg) {
    struct side *s = arg;
    int rc = s->mode != PLAIN, batched = s->mode == BATCHED || s->mode == GSO || s->mode == GSO_MMSG ? (int) s->mode : 0;
    for (long i = 0; i < s->total; i++) {
        take(s->fd, rc && i > 0 ? 2 : 1, batched);
        put(s->fd, rc, s->size, batched);
    }
    if (rc) {
        take(s->fd, 1, batched); /* the ACK of the last answer */
    }
    return NULL;
}

/* One run of a mode; returns the median half round trip in ns and prints its line. */
static double run(enum mode mode, long iters, int size, long warmup) {
    int cli = open_bound("127.0.0.2"), srv = open_bound("127.0.0.1");
    connect_to(cli, srv);
    connect_to(srv, cli);
    struct side s = {srv, mode, size, warmup + iters};
    pthread_t t;
    pthread_create(&t, NULL, serve, &s);
    int rc = mode != PLAIN, batched = mode == BATCHED || mode == GSO || mode == GSO_MMSG ? (int) mode : 0;
    if (mode == GSO || mode == GSO_MMSG) {
        int on = 1;
        if (setsockopt(cli, IPPROTO_UDP, UDP_GRO, &on, sizeof on) != 0
                || setsockopt(srv, IPPROTO_UDP, UDP_GRO, &on, sizeof on) != 0) {
            perror("udp_rc_floor: UDP_GRO");
            exit(1);
        }
    }
    double *stamp = malloc(sizeof(double) * (size_t) (iters + 1));
    for (long i = 0; i < warmup + iters; i++) {
        if (i >= warmup) {
            stamp[i - warmup] = now_ns();
        }
        /* the ACK of the previous answer leaves with the next request, as an RC requester's would */
        put(cli, rc && i > 0, size, batched);
        take(cli, rc ? 2 : 1, batched); /* the request's ACK and the answer */
    }
    if (rc) {
        put(cli, 1, -1, 0);
    }
    stamp[iters] = now_ns();
    pthread_join(t, NULL);
    struct half_rt h = half_round_trips(stamp, iters);
    printf("%-8s t_typical %8.2f us   t_avg %8.2f us   99%% %8.2f us\n", names[mode], h.median / 1000, h.mean / 1000,
           h.p99 / 1000);
    free(stamp);
    close(cli);
    close(srv);
    return h.median;
}

int main(int argc, char **argv) {
    long iters, warmup;
    int size;
    if (floor_args(argc, argv, &iters, &size, &warmup, 0, MAX_SIZE) != 0) {
        fprintf(stderr, "usage: udp_rc_floor [ITERS>=2 [SIZE<=%d [WARMUP]]]\n", MAX_SIZE);
        return 2;
    }
    printf("UDP ping-pong 127.0.0.2 <-> 127.0.0.1, %d-byte messages, %ld iterations after %ld warm-up (half round trip):\n",
           size, iters, warmup);
    double plain = run(PLAIN, iters, size, warmup);
    double acks = run(ACKS, iters, size, warmup);
    double batched = run(BATCHED, iters, size, warmup);
    double gso = run(GSO, iters, size, warmup);
    double gso_mmsg = run(GSO_MMSG, iters, size, warmup);
    printf("acks / plain t_typical %.2fx   batched / plain %.2fx   gso / plain %.2fx   gso_mmsg / plain %.2fx\n",
           acks / plain, batched / plain, gso / plain, gso_mmsg / plain);
    return 0;
}
