/*
 * The UDP plumbing the C latency floors share: loopback sockets, UDP GRO's segment count, a GSO pair, the clock,
 * their arguments, the half round trips of their stamps.
 */
#ifndef JHCA_UDP_SOCKETS_H
#define JHCA_UDP_SOCKETS_H

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/udp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int open_bound(const char *addr) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    inet_pton(AF_INET, addr, &sa.sin_addr);
    if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) != 0) {
        perror("udp floor: socket/bind (is the loopback address local?)");
        exit(1);
    }
    return fd;
}

static void connect_to(int fd, int peer) {
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    getsockname(peer, (struct sockaddr *) &sa, &len);
    if (connect(fd, (struct sockaddr *) &sa, len) != 0) {
        perror("udp floor: connect");
        exit(1);
    }
}

/* The segment size of a datagram that came coalesced (UDP_GRO's cmsg), or 0 if it came alone. */
static int gro_size(struct msghdr *m) {
    for (struct cmsghdr *c = CMSG_FIRSTHDR(m); c != NULL; c = CMSG_NXTHDR(m, c)) {
        if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
            int segment;
            memcpy(&segment, CMSG_DATA(c), sizeof segment);
            return segment;
        }
    }
    return 0;
}

/* How many datagrams a received one of len bytes held: 1, or its segments if it came coalesced. */
static int segments(struct msghdr *m, size_t len) {
    size_t segment = (size_t) gro_size(m);
    return segment == 0 ? 1 : (int) ((len + segment - 1) / segment);
}

/* Both iovecs as one GSO datagram, the longer first (every segment but the last has the first's size). */
static void put_coalesced(int fd, struct iovec *io) {
    struct iovec both[2] = {io[0], io[1]};
    if (io[1].iov_len > io[0].iov_len) {
        both[0] = io[1];
        both[1] = io[0];
    }
    char control[CMSG_SPACE(sizeof(uint16_t))];
    memset(control, 0, sizeof control);
    struct msghdr m = {.msg_iov = both, .msg_iovlen = 2, .msg_control = control, .msg_controllen = sizeof control};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = IPPROTO_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    uint16_t segment = (uint16_t) both[0].iov_len;
    memcpy(CMSG_DATA(c), &segment, sizeof segment);
    if (sendmsg(fd, &m, 0) < 0) {
        perror("udp floor: sendmsg (UDP_SEGMENT)");
        exit(1);
    }
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* Half of each round trip between consecutive stamps, as perftest reports latency: median, mean, 99th percentile. */
struct half_rt {
    double median, mean, p99;
};

static struct half_rt half_round_trips(const double *stamp, long iters) {
    double *half = malloc(sizeof(double) * (size_t) iters), sum = 0;
    for (long i = 0; i < iters; i++) {
        half[i] = (stamp[i + 1] - stamp[i]) / 2;
        sum += half[i];
    }
    qsort(half, (size_t) iters, sizeof(double), cmp);
    struct half_rt r = {half[iters / 2], sum / iters, half[(long) (iters * 0.99)]};
    free(half);
    return r;
}

/* ITERS SIZE WARMUP (defaults 20000, 2, 20000): 0, or -1 if one is out of range (ITERS >= 2, min..max, WARMUP >= 0). */
static int floor_args(int argc, char **argv, long *iters, int *size, long *warmup, int min_size, int max_size) {
    *iters = argc > 1 ? atol(argv[1]) : 20000;
    *size = argc > 2 ? atoi(argv[2]) : 2;
    *warmup = argc > 3 ? atol(argv[3]) : 20000;
    return *iters < 2 || *size < min_size || *size > max_size || *warmup < 0 ? -1 : 0;
}

#endif
