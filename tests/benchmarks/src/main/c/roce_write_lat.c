/*
 * ib_write_lat's ping-pong as a C implementation of RoCEv2 RC over UDP sockets runs it: what the protocol's work
 * adds to the datagrams when it is done in C, the lower bound against which jhca's rxe write-lat (Java) can be read.
 * udp_rc_floor.c measures the datagrams alone.
 *
 * Two threads (the client on 127.0.0.2, the server on 127.0.0.1), each the requester and responder of one RC QP
 * over a connected non-blocking UDP socket with UDP_GRO, busy-polling. Per iteration, as perftest's
 * run_iter_lat_write: the client posts a WRITE of SIZE bytes whose last byte is the iteration's count, polls its
 * send CQ until the WRITE's ACK comes, then waits for the server's WRITE to land; the server waits for the client's
 * WRITE, posts its own and polls its completion. A responder holds its ACK and sends it with its QP's next request
 * as one GSO datagram, the request first, as jhca's rxe does on loopback. The work per packet is what an RC
 * implementation must do:
 *   post      a WQE into the send ring (wr_id, local SGE, remote address, rkey), the ring's room checked;
 *   transmit  the SGE checked against the local MR (lkey, range); BTH (opcode, pad count, P_Key, dest QPN, AckReq,
 *             PSN), RETH, the payload copied, pad, ICRC; a held ACK: BTH, AETH (syndrome, MSN), ICRC;
 *   receive   per segment: its length, its ICRC (CRC-32 over the masked IPv4, UDP and BTH pseudo-header, then
 *             the rest; rxe_icrc.c), the BTH's version, P_Key, dest QPN and opcode; a WRITE's PSN against the
 *             expected one, its RETH's rkey, range (inside the MR, no wrap) and length against the payload, the
 *             payload copied into the MR, the ACK held; an ACK's syndrome and PSN against the outstanding WQEs,
 *             whose completions go to the CQ (wr_id, status, opcode, byte count, QPN);
 *   poll      a CQE taken from the CQ.
 * Left out: timers (a requester reads a clock for its retransmit timer, a responder for its ACK hold), resends,
 * NAKs, multi-packet messages. So this is a lower bound for any implementation, in any language.
 *
 * Reported as perftest reports latency (half the round trip): t_typical and t_avg of ITERS iterations after WARMUP
 * unmeasured ones, beside the plain UDP ping-pong of SIZE-byte datagrams measured in the same run, and their ratio.
 *
 * ICRCs are computed by PCLMULQDQ folding (inputs under 16 bytes by tables), as Linux's crc32_le on x86 computes
 * them (crc32 below); ROCE_WRITE_LAT_CRC=tables computes them by eight tables alone, as without PCLMULQDQ.
 *
 * Usage: roce_write_lat [ITERS [SIZE [WARMUP]]]   (defaults 20000, 2, 20000; SIZE at most 1024, one packet)
 *        roce_write_lat --check-crc [SEED]       the folded CRC against the tables and zlib (check_crc), and timed
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <immintrin.h>
#include <pthread.h>
#include <unistd.h>

#include "udp_sockets.h"

#define ROCE_PORT 4791
#define BTH 12
#define RETH 16
#define AETH 4
#define ICRC 4
#define ACK_LEN (BTH + AETH + ICRC)
#define OP_WRITE_ONLY 0x0a /* RC RDMA WRITE Only (IBTA table 38) */
#define OP_ACK 0x11        /* RC Acknowledge */
#define PKEY 0xffff
#define PSN_MASK 0xffffffu
#define RING 64            /* send queue and CQ entries, powers of two */
#define MR_LEN 4096
#define MTU 1024           /* a WRITE Only's payload at most: the loop sends single-packet messages */
#define MAX_PACKET 2048

struct wqe {
    uint64_t wr_id, laddr, raddr;
    uint32_t length, lkey, rkey, psn;
};

struct cqe {
    uint64_t wr_id;
    uint32_t byte_len, qpn;
    int status, opcode;
};

struct mr {
    uint8_t *base;
    uint32_t length, lkey, rkey;
};

/* One side: its QP (requester and responder), MR, CQ and socket. */
struct side {
    int fd;
    uint32_t src_ip, dst_ip; /* host order */
    uint16_t sport, dport;   /* the bound ports (the pseudo-header's) */
    uint32_t qpn, dest_qpn;
    /* requester */
    struct wqe sq[RING];
    uint32_t sq_head, sq_sent, sq_tail; /* posted, transmitted, completed */
    uint32_t next_psn;
    /* responder */
    uint32_t epsn, msn;
    int ack_held;
    uint32_t ack_psn;
    /* CQ */
    struct cqe cq[RING];
    uint32_t cq_head, cq_tail;
    struct mr mr;
    uint8_t send_buf[MAX_PACKET], recv_buf[2 * MAX_PACKET];
    long drops;
    long total;
    int size;
    /* the other side: its MR is where this side's WRITEs go (perftest exchanges address and rkey out of band) */
    struct side *peer;
    /* memory mode: datagrams go straight into the peer's receive buffer, no socket (the Java work's benchmark's twin) */
    int in_memory;
    uint32_t inbox_len, inbox_segment;
};

/*
 * CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320, zlib's crc32() conventions: the register inverted before and
 * after), as Linux computes it on x86 (arch/x86/lib/crc-pclmul-template.h, 2025): an input of 16 bytes or more by
 * carry-less multiplication (PCLMULQDQ), its 16-byte blocks folded, a last partial block folded onto them, a Barrett
 * reduction to 32 bits (crc32_clmul); a shorter one by eight tables, eight bytes a step, then four (crc32_tables).
 * ROCE_WRITE_LAT_CRC=tables takes every input by the tables, as a C implementation without PCLMULQDQ would, and so
 * does a CPU without it. Here a 2-byte WRITE's ICRC input (the 40-byte pseudo-header, then 20 bytes) took 21 ns
 * folded, 35 ns by the tables (39 before their four-byte step), 138 ns by zlib 1.2.13's crc32, which takes inputs
 * this short a byte at a time (roce_write_lat --check-crc times them).
 */
static uint32_t crc_table[8][256];
static int crc_clmul; /* whether crc32 takes inputs of 16 bytes or more by PCLMULQDQ */

static void crc32_init(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) {
            c = c & 1 ? c >> 1 ^ 0xEDB88320u : c >> 1;
        }
        crc_table[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++) {
        for (int t = 1; t < 8; t++) {
            crc_table[t][i] = crc_table[t - 1][i] >> 8 ^ crc_table[0][crc_table[t - 1][i] & 0xff];
        }
    }
    const char *choice = getenv("ROCE_WRITE_LAT_CRC");
    crc_clmul = __builtin_cpu_supports("pclmul") && !(choice != NULL && strcmp(choice, "tables") == 0);
}

/* The register (not inverted) after n bytes, by the tables. */
static uint32_t crc32_tables(uint32_t c, const uint8_t *p, size_t n) {
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        w ^= c;
        c = crc_table[7][w & 0xff] ^ crc_table[6][w >> 8 & 0xff] ^ crc_table[5][w >> 16 & 0xff]
                ^ crc_table[4][w >> 24 & 0xff] ^ crc_table[3][w >> 32 & 0xff] ^ crc_table[2][w >> 40 & 0xff]
                ^ crc_table[1][w >> 48 & 0xff] ^ crc_table[0][w >> 56];
    }
    if (n >= 4) { /* four bytes in one step by four of the tables (an ACK's AETH) */
        uint32_t w;
        memcpy(&w, p, 4);
        w ^= c;
        c = crc_table[3][w & 0xff] ^ crc_table[2][w >> 8 & 0xff] ^ crc_table[1][w >> 16 & 0xff] ^ crc_table[0][w >> 24];
        p += 4;
        n -= 4;
    }
    while (n-- > 0) {
        c = c >> 8 ^ crc_table[0][(c ^ *p++) & 0xff];
    }
    return c;
}

/*
 * The fold and reduction constants for the reflected 0x04C11DB7, as Intel's white paper "Fast CRC Computation for
 * Generic Polynomials Using PCLMULQDQ Instruction" (2009) defines them, with the values of Linux's
 * arch/x86/crypto/crc32-pclmul_asm.S (constant_R2R1, R4R3, R5, RUpoly): k1 = x^(4*128+32) mod P, k2 = x^(4*128-32)
 * mod P (four blocks ahead), k3 = x^(128+32) mod P, k4 = x^(128-32) mod P (one block ahead), k5 = x^64 mod P, each
 * bit-reflected and shifted left by one; mu = floor(x^64 / P) and P itself, bit-reflected.
 */
#define CRC_K1 0x154442bd4ull
#define CRC_K2 0x1c6e41596ull
#define CRC_K3 0x1751997d0ull
#define CRC_K4 0x0ccaa009eull
#define CRC_K5 0x163cd6124ull
#define CRC_MU 0x1f7011641ull
#define CRC_P 0x1db710641ull

/* x folded one step ahead by the constants' pair (k1/k2 or k3/k4), onto the next block y. */
__attribute__((target("pclmul,sse4.1")))
static inline __m128i crc_fold(__m128i x, __m128i k, __m128i y) {
    return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11)), y);
}

/* PSHUFB indices: 16 bytes from shift_bytes + 16 + r shift a vector down r bytes, from shift_bytes + r up 16 - r. */
static const uint8_t shift_bytes[48] = {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80};

/* The register (not inverted) after n >= 16 bytes: folded 64 or 16 bytes a step, a last partial block, reduced. */
__attribute__((target("pclmul,sse4.1")))
static uint32_t crc32_clmul(uint32_t c, const uint8_t *p, size_t n) {
    const __m128i k1k2 = _mm_set_epi64x(CRC_K2, CRC_K1), k3k4 = _mm_set_epi64x(CRC_K4, CRC_K3);
    const __m128i k5 = _mm_set_epi64x(0, CRC_K5), mu_p = _mm_set_epi64x(CRC_MU, CRC_P);
    const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
    __m128i x = _mm_xor_si128(_mm_loadu_si128((const __m128i *) p), _mm_cvtsi32_si128((int) c));
    if (n >= 64) { /* four independent folds a step: the multiplier's latency overlaps */
        __m128i x1 = _mm_loadu_si128((const __m128i *) (p + 16)), x2 = _mm_loadu_si128((const __m128i *) (p + 32));
        __m128i x3 = _mm_loadu_si128((const __m128i *) (p + 48));
        for (p += 64, n -= 64; n >= 64; p += 64, n -= 64) {
            x = crc_fold(x, k1k2, _mm_loadu_si128((const __m128i *) p));
            x1 = crc_fold(x1, k1k2, _mm_loadu_si128((const __m128i *) (p + 16)));
            x2 = crc_fold(x2, k1k2, _mm_loadu_si128((const __m128i *) (p + 32)));
            x3 = crc_fold(x3, k1k2, _mm_loadu_si128((const __m128i *) (p + 48)));
        }
        x = crc_fold(crc_fold(crc_fold(x, k3k4, x1), k3k4, x2), k3k4, x3);
    } else {
        p += 16;
        n -= 16;
    }
    for (; n >= 16; p += 16, n -= 16) {
        x = crc_fold(x, k3k4, _mm_loadu_si128((const __m128i *) p));
    }
    if (n > 0) {
        /*
         * The last n < 16 bytes: x and they are 16 + n bytes, the first n of which (x's) fold, as a block with
         * 16 - n zero bytes ahead, onto the last 16 (the rest of x, then the n bytes, loaded where they end).
         */
        __m128i up = _mm_loadu_si128((const __m128i *) (shift_bytes + n));
        __m128i down = _mm_shuffle_epi8(x, _mm_loadu_si128((const __m128i *) (shift_bytes + 16 + n)));
        __m128i last = _mm_blendv_epi8(_mm_loadu_si128((const __m128i *) (p + n - 16)), down, up);
        x = crc_fold(_mm_shuffle_epi8(x, up), k3k4, last);
    }
    /* 128 bits to 96: the low half times k4 onto the high half; 96 to 64: the low 32 bits times k5 onto the rest */
    x = _mm_xor_si128(_mm_srli_si128(x, 8), _mm_clmulepi64_si128(x, k3k4, 0x10));
    x = _mm_xor_si128(_mm_srli_si128(x, 4), _mm_clmulepi64_si128(_mm_and_si128(x, low32), k5, 0x00));
    /* Barrett: the quotient's low 32 bits (x's low 32 times mu), times P, cancel x's low 32; bits 32..63 remain */
    __m128i q = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x, low32), mu_p, 0x10), low32);
    return (uint32_t) _mm_extract_epi32(_mm_xor_si128(x, _mm_clmulepi64_si128(q, mu_p, 0x00)), 1);
}

/* crc32(crc32(0, a), b) == crc32(0, a || b), as zlib's: the register is inverted on the way in and out. */
static uint32_t crc32(uint32_t crc, const uint8_t *p, size_t n) {
    return crc_clmul && n >= 16 ? ~crc32_clmul(~crc, p, n) : ~crc32_tables(~crc, p, n);
}

static uint32_t lrh_seed; /* the CRC after 8 bytes of 0xFF, the masked LRH */

static void put16(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t) (v >> 8);
    p[1] = (uint8_t) v;
}

static void put32(uint8_t *p, uint32_t v) {
    uint32_t be = htonl(v);
    memcpy(p, &be, 4);
}

static uint32_t get32(const uint8_t *p) {
    uint32_t be;
    memcpy(&be, p, 4);
    return ntohl(be);
}

static uint32_t get24(const uint8_t *p) {
    return (uint32_t) p[0] << 16 | (uint32_t) p[1] << 8 | p[2];
}

/*
 * The ICRC of a RoCE packet of len bytes (BTH to the end of the pad) in an IPv4 datagram with this Identification:
 * the pseudo-header as rxe_icrc.c masks it (TOS, TTL, header checksum, UDP checksum all ones; the BTH's byte 4),
 * then the packet after its BTH.
 */
static uint32_t icrc(uint32_t from_ip, uint32_t to_ip, uint16_t from_port, uint16_t to_port, uint16_t ip_id,
                     const uint8_t *pkt, uint32_t len) {
    uint8_t ph[20 + 8 + BTH];
    uint32_t udp_len = 8 + len + ICRC;
    ph[0] = 0x45;
    ph[1] = 0xff;
    put16(ph + 2, 20 + udp_len);
    put16(ph + 4, ip_id);
    put16(ph + 6, 0x4000); /* DF */
    ph[8] = 0xff;
    ph[9] = 17;
    put16(ph + 10, 0xffff);
    put32(ph + 12, from_ip);
    put32(ph + 16, to_ip);
    put16(ph + 20, from_port);
    put16(ph + 22, to_port);
    put16(ph + 24, udp_len);
    put16(ph + 26, 0xffff);
    memcpy(ph + 28, pkt, BTH);
    ph[28 + 4] = 0xff;
    return crc32(crc32(lrh_seed, ph, sizeof ph), pkt + BTH, len - BTH);
}

static void put_icrc(uint8_t *at, uint32_t crc) {
    memcpy(at, &crc, 4); /* little-endian, as rxe stores it (x86) */
}

static void bth(uint8_t *p, int opcode, int pad, uint32_t dest_qpn, int ack_req, uint32_t psn) {
    p[0] = (uint8_t) opcode;
    p[1] = (uint8_t) (pad << 4); /* SE 0, MigReq 0, TVer 0 */
    put16(p + 2, PKEY);
    put32(p + 4, dest_qpn & 0xffffff);
    put32(p + 8, (uint32_t) ack_req << 31 | (psn & PSN_MASK));
}

/* The held ACK at a: BTH, AETH (ACK, credits not given, the MSN), ICRC for the IPv4 ID its datagram will carry. */
static void put_ack(struct side *s, uint8_t *a, uint16_t ip_id) {
    bth(a, OP_ACK, 0, s->dest_qpn, 0, s->ack_psn);
    put32(a + BTH, 0x1fu << 24 | (s->msn & 0xffffff));
    put_icrc(a + BTH + AETH, icrc(s->src_ip, s->dst_ip, s->sport, s->dport, ip_id, a, BTH + AETH));
    s->ack_held = 0;
}

/* Whether [addr, addr + len) lies inside the MR, with no sum that could wrap. */
static int mr_contains(const struct mr *mr, uint64_t addr, uint32_t len) {
    uintptr_t base = (uintptr_t) mr->base;
    return addr >= base && len <= mr->length && addr - base <= mr->length - len;
}

/* One datagram (io[1] empty) or a GSO pair, the first the longer: to the socket, or in memory mode to the peer. */
static void hand_over(struct side *s, struct iovec *io) {
    if (s->in_memory) {
        struct side *to = s->peer;
        if (to->inbox_len != 0) {
            fprintf(stderr, "roce_write_lat: the peer has not taken its last datagram\n");
            exit(1);
        }
        memcpy(to->recv_buf, io[0].iov_base, io[0].iov_len);
        if (io[1].iov_len != 0) {
            memcpy(to->recv_buf + io[0].iov_len, io[1].iov_base, io[1].iov_len);
        }
        to->inbox_len = (uint32_t) (io[0].iov_len + io[1].iov_len);
        to->inbox_segment = io[1].iov_len != 0 ? (uint32_t) io[0].iov_len : 0;
    } else if (io[1].iov_len != 0) {
        put_coalesced(s->fd, io);
    } else if (send(s->fd, io[0].iov_base, io[0].iov_len, 0) < 0) {
        perror("roce_write_lat: send");
        exit(1);
    }
}

/* ibv_post_send of one signaled RDMA WRITE: a WQE into the ring. Returns 0, or -1 if the ring is full. */
static int post_write(struct side *s, uint64_t wr_id, uint64_t laddr, uint32_t length, uint32_t lkey, uint64_t raddr,
                      uint32_t rkey) {
    if (s->sq_head - s->sq_tail == RING) {
        return -1;
    }
    struct wqe *w = &s->sq[s->sq_head & (RING - 1)];
    w->wr_id = wr_id;
    w->laddr = laddr;
    w->length = length;
    w->lkey = lkey;
    w->raddr = raddr;
    w->rkey = rkey;
    s->sq_head++;
    return 0;
}

/* The requester: every posted WQE not yet sent leaves as a WRITE Only, the held ACK (if any) in the same GSO send. */
static void transmit(struct side *s) {
    while (s->sq_sent != s->sq_head) {
        struct wqe *w = &s->sq[s->sq_sent & (RING - 1)];
        if (w->lkey != s->mr.lkey || !mr_contains(&s->mr, w->laddr, w->length)) {
            fprintf(stderr, "roce_write_lat: local protection error\n");
            exit(1);
        }
        int pad = (int) (-w->length & 3);
        uint32_t len = BTH + RETH + w->length + (uint32_t) pad;
        uint8_t *p = s->send_buf;
        w->psn = s->next_psn;
        bth(p, OP_WRITE_ONLY, pad, s->dest_qpn, 1, w->psn);
        s->next_psn = (s->next_psn + 1) & PSN_MASK;
        uint64_t va = w->raddr;
        put32(p + BTH, (uint32_t) (va >> 32));
        put32(p + BTH + 4, (uint32_t) va);
        put32(p + BTH + 8, w->rkey);
        put32(p + BTH + 12, w->length);
        memcpy(p + BTH + RETH, (const void *) (uintptr_t) w->laddr, w->length);
        memset(p + BTH + RETH + w->length, 0, (size_t) pad);
        put_icrc(p + len, icrc(s->src_ip, s->dst_ip, s->sport, s->dport, 0, p, len));
        struct iovec io[2] = {{p, len + ICRC}, {NULL, 0}};
        if (s->ack_held) {
            uint8_t *a = p + len + ICRC;
            put_ack(s, a, 1); /* the second segment of the GSO datagram */
            io[1] = (struct iovec) {a, ACK_LEN};
        }
        hand_over(s, io);
        s->sq_sent++;
    }
}

/* Sends a held ACK alone (the end of the run: no request follows to take it). */
static void flush_ack(struct side *s) {
    if (!s->ack_held) {
        return;
    }
    put_ack(s, s->send_buf, 0);
    struct iovec io[2] = {{s->send_buf, ACK_LEN}, {NULL, 0}};
    hand_over(s, io);
}

static int psn_after(uint32_t a, uint32_t b) { /* a after b, 24-bit serial arithmetic */
    return ((a - b) & PSN_MASK) != 0 && ((a - b) & PSN_MASK) < 0x800000;
}

static void on_write(struct side *s, const uint8_t *p, uint32_t len, int pad, uint32_t psn) {
    if (len < BTH + RETH + (uint32_t) pad || psn != s->epsn) {
        s->drops++; /* a real responder NAKs a gap and re-ACKs a duplicate; this loop makes neither */
        return;
    }
    uint64_t va = (uint64_t) get32(p + BTH) << 32 | get32(p + BTH + 4);
    uint32_t rkey = get32(p + BTH + 8), dma_len = get32(p + BTH + 12);
    uint32_t payload = len - BTH - RETH - (uint32_t) pad;
    if (rkey != s->mr.rkey || dma_len != payload || !mr_contains(&s->mr, va, dma_len)) {
        s->drops++; /* a remote access error NAK in a real responder */
        return;
    }
    memcpy((void *) (uintptr_t) va, p + BTH + RETH, dma_len);
    s->epsn = (s->epsn + 1) & PSN_MASK;
    s->msn++;
    s->ack_held = 1;
    s->ack_psn = psn;
}

static void on_ack(struct side *s, const uint8_t *p, uint32_t len, uint32_t psn) {
    if (len != BTH + AETH || (p[BTH] >> 5) != 0) {
        s->drops++;
        return;
    }
    while (s->sq_tail != s->sq_sent) {
        struct wqe *w = &s->sq[s->sq_tail & (RING - 1)];
        if (psn_after(w->psn, psn)) {
            break;
        }
        if (s->cq_head - s->cq_tail == RING) {
            fprintf(stderr, "roce_write_lat: CQ overrun\n");
            exit(1);
        }
        struct cqe *c = &s->cq[s->cq_head & (RING - 1)];
        c->wr_id = w->wr_id;
        c->status = 0;
        c->opcode = 1; /* IBV_WC_RDMA_WRITE */
        c->byte_len = w->length;
        c->qpn = s->qpn;
        s->cq_head++;
        s->sq_tail++;
    }
}

/* One received segment of len bytes that carried this IPv4 Identification. */
static void on_packet(struct side *s, const uint8_t *p, uint32_t len, uint16_t ip_id) {
    if (len < BTH + ICRC) {
        s->drops++;
        return;
    }
    len -= ICRC;
    uint32_t got;
    memcpy(&got, p + len, 4);
    if (got != icrc(s->dst_ip, s->src_ip, s->dport, s->sport, ip_id, p, len)) {
        s->drops++;
        return;
    }
    int pad = (p[1] >> 4) & 3;
    if ((p[1] & 0x0f) != 0 || (uint32_t) (p[2] << 8 | p[3]) != PKEY || get24(p + 5) != s->qpn) {
        s->drops++;
        return;
    }
    uint32_t psn = get24(p + 9);
    if (p[0] == OP_WRITE_ONLY) {
        on_write(s, p, len, pad, psn);
    } else if (p[0] == OP_ACK) {
        on_ack(s, p, len, psn);
    } else {
        s->drops++;
    }
}

/* The n bytes in the receive buffer: one datagram, or (segment != 0) a coalesced one's segments in order. */
static void on_datagram(struct side *s, uint32_t n, uint32_t segment) {
    if (segment == 0) {
        segment = n;
    }
    uint16_t id = 0;
    for (uint32_t at = 0; at < n; at += segment, id++) {
        on_packet(s, s->recv_buf + at, n - at < segment ? n - at : segment, id);
    }
}

/* One receive call: a datagram, or a coalesced one's segments in order (IDs 0, 1, ... as the kernel numbers them). */
static void receive(struct side *s) {
    if (s->in_memory) {
        uint32_t n = s->inbox_len;
        s->inbox_len = 0;
        on_datagram(s, n, s->inbox_segment);
        return;
    }
    char control[CMSG_SPACE(sizeof(int))];
    struct iovec io = {s->recv_buf, sizeof s->recv_buf};
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof control};
    ssize_t n = recvmsg(s->fd, &m, MSG_DONTWAIT);
    if (n < 0) {
        if (errno != EAGAIN) {
            perror("roce_write_lat: recvmsg");
            exit(1);
        }
        return;
    }
    on_datagram(s, (uint32_t) n, (uint32_t) gro_size(&m));
}

/* ibv_poll_cq of one entry: 1 and the CQE, or 0. */
static int poll_cq(struct side *s, struct cqe *out) {
    if (s->cq_tail == s->cq_head) {
        return 0;
    }
    *out = s->cq[s->cq_tail & (RING - 1)];
    s->cq_tail++;
    return 1;
}

/* Polls the send CQ until the last WRITE's completion, receiving meanwhile; checks it. */
static void await_completion(struct side *s, uint64_t wr_id) {
    struct cqe c;
    while (poll_cq(s, &c) == 0) {
        receive(s);
    }
    if (c.status != 0 || c.wr_id != wr_id || c.byte_len != (uint32_t) s->size) {
        fprintf(stderr, "roce_write_lat: completion %lu status %d, expected %lu\n", (unsigned long) c.wr_id, c.status,
                (unsigned long) wr_id);
        exit(1);
    }
}

/* Waits for the peer's WRITE of iteration i to land: the MR's last written byte becomes the count. */
static void await_data(struct side *s, long i) {
    volatile uint8_t *last = s->mr.base + s->size - 1;
    while (*last != (uint8_t) (i + 1)) {
        receive(s);
    }
}

/* Posts and sends iteration i's WRITE into the peer's MR, its last byte the count. */
static void write_next(struct side *s, long i) {
    uint8_t *src = s->mr.base + MR_LEN / 2; /* the local buffer: the MR's upper half */
    src[s->size - 1] = (uint8_t) (i + 1);
    if (post_write(s, (uint64_t) i, (uintptr_t) src, (uint32_t) s->size, s->mr.lkey, (uintptr_t) s->peer->mr.base,
                   s->peer->mr.rkey) != 0) {
        fprintf(stderr, "roce_write_lat: send queue full\n");
        exit(1);
    }
    transmit(s);
}

static void *serve(void *arg) {
    struct side *s = arg;
    for (long i = 0; i < s->total; i++) {
        await_data(s, i);
        write_next(s, i);
        await_completion(s, (uint64_t) i);
    }
    return NULL;
}

static void open_side(struct side *s, const char *addr, uint32_t qpn, uint32_t dest_qpn, uint32_t key, int size,
                      long total) {
    memset(s, 0, sizeof *s);
    s->fd = open_bound(addr);
    int on = 1;
    if (setsockopt(s->fd, IPPROTO_UDP, UDP_GRO, &on, sizeof on) != 0) {
        perror("roce_write_lat: UDP_GRO");
        exit(1);
    }
    s->qpn = qpn;
    s->dest_qpn = dest_qpn;
    s->next_psn = s->epsn = 0xfffff0; /* the loop crosses 0xFFFFFF -> 0 */
    s->size = size;
    s->total = total;
    s->mr.base = aligned_alloc(4096, MR_LEN);
    memset(s->mr.base, 0, MR_LEN);
    s->mr.length = MR_LEN;
    s->mr.lkey = key;
    s->mr.rkey = key;
}

/* The addresses and ports of both ends (the pseudo-header's); then each socket connected to the other. */
static void pair_up(struct side *a, struct side *b) {
    struct sockaddr_in sa, sb;
    socklen_t la = sizeof sa, lb = sizeof sb;
    getsockname(a->fd, (struct sockaddr *) &sa, &la);
    getsockname(b->fd, (struct sockaddr *) &sb, &lb);
    a->src_ip = b->dst_ip = ntohl(sa.sin_addr.s_addr);
    b->src_ip = a->dst_ip = ntohl(sb.sin_addr.s_addr);
    a->sport = b->dport = ntohs(sa.sin_port);
    b->sport = a->dport = ntohs(sb.sin_port);
    connect_to(a->fd, b->fd);
    connect_to(b->fd, a->fd);
}

/* Every packet taken, both PSN spaces in step, every WQE completed; then the sockets and MRs go. */
static void check_and_close(struct side *cli, struct side *srv) {
    if (cli->drops + srv->drops != 0 || cli->epsn != srv->next_psn || srv->epsn != cli->next_psn
            || cli->sq_tail != cli->sq_head || srv->sq_tail != srv->sq_head) {
        fprintf(stderr, "roce_write_lat: %ld packets dropped, PSNs %x/%x %x/%x, WQEs %u/%u %u/%u\n",
                cli->drops + srv->drops, cli->epsn, srv->next_psn, srv->epsn, cli->next_psn, cli->sq_tail,
                cli->sq_head, srv->sq_tail, srv->sq_head);
        exit(1);
    }
    close(cli->fd);
    close(srv->fd);
    free(cli->mr.base);
    free(srv->mr.base);
}

/* The client (127.0.0.2, QPN 0x12) and the server (127.0.0.1, QPN 0x11), each the other's peer. */
static void open_pair(struct side *cli, struct side *srv, int size, long total) {
    open_side(cli, "127.0.0.2", 0x12, 0x11, 0x2201, size, total);
    open_side(srv, "127.0.0.1", 0x11, 0x12, 0x1101, size, total);
    pair_up(cli, srv);
    cli->peer = srv;
    srv->peer = cli;
}


static double run_roce(long iters, int size, long warmup, double *mean) {
    static struct side cli, srv;
    open_pair(&cli, &srv, size, warmup + iters);
    pthread_t t;
    pthread_create(&t, NULL, serve, &srv);
    double *stamp = malloc(sizeof(double) * (size_t) (iters + 1));
    for (long i = 0; i < warmup + iters; i++) {
        if (i >= warmup) {
            stamp[i - warmup] = now_ns();
        }
        write_next(&cli, i);
        await_completion(&cli, (uint64_t) i);
        await_data(&cli, i);
    }
    stamp[iters] = now_ns();
    flush_ack(&cli);
    pthread_join(t, NULL);
    check_and_close(&cli, &srv);
    struct half_rt h = half_round_trips(stamp, iters);
    *mean = h.mean;
    free(stamp);
    return h.median;
}

/*
 * Both sides in this thread, their datagrams handed over in memory: the protocol's work of a round trip alone, no
 * kernel (what RxeWriteLatBenchmark -p link=memory times in Java). Returns the mean ns per round trip.
 */
static double run_memory(long iters, int size, long warmup) {
    static struct side cli, srv;
    open_pair(&cli, &srv, size, warmup + iters);
    cli.in_memory = srv.in_memory = 1;
    double t0 = 0;
    for (long i = 0; i < warmup + iters; i++) {
        if (i == warmup) {
            t0 = now_ns();
        }
        write_next(&cli, i);
        await_data(&srv, i); /* the WRITE, and the ACK of the server's last one */
        if (i > 0) {
            await_completion(&srv, (uint64_t) (i - 1));
        }
        write_next(&srv, i);
        await_completion(&cli, (uint64_t) i);
        await_data(&cli, i);
    }
    double t1 = now_ns();
    flush_ack(&cli);
    receive(&srv);
    await_completion(&srv, (uint64_t) (warmup + iters - 1));
    check_and_close(&cli, &srv);
    return (t1 - t0) / (double) iters;
}

/* The plain UDP ping-pong of size-byte datagrams (hwlab's UDP floor): the server's socket and its work. */
struct plain {
    int fd;
    int size;
    long total;
};

static void plain_take(int fd, char *buf) {
    while (recv(fd, buf, MAX_PACKET, MSG_DONTWAIT) < 0) {
        if (errno != EAGAIN) {
            perror("roce_write_lat: recv");
            exit(1);
        }
    }
}

static void *plain_serve(void *arg) {
    const struct plain *p = arg;
    char buf[MAX_PACKET];
    for (long i = 0; i < p->total; i++) {
        plain_take(p->fd, buf);
        if (send(p->fd, buf, (size_t) p->size, 0) < 0) {
            perror("roce_write_lat: send");
            exit(1);
        }
    }
    return NULL;
}

static double run_plain(long iters, int size, long warmup, double *mean) {
    int cli = open_bound("127.0.0.2"), srv = open_bound("127.0.0.1");
    connect_to(cli, srv);
    connect_to(srv, cli);
    struct plain server = {srv, size, warmup + iters};
    pthread_t t;
    pthread_create(&t, NULL, plain_serve, &server);
    char buf[MAX_PACKET] = {0};
    double *stamp = malloc(sizeof(double) * (size_t) (iters + 1));
    for (long i = 0; i < warmup + iters; i++) {
        if (i >= warmup) {
            stamp[i - warmup] = now_ns();
        }
        if (send(cli, buf, (size_t) size, 0) < 0) {
            perror("roce_write_lat: send");
            exit(1);
        }
        plain_take(cli, buf);
    }
    stamp[iters] = now_ns();
    pthread_join(t, NULL);
    struct half_rt h = half_round_trips(stamp, iters);
    *mean = h.mean;
    free(stamp);
    close(cli);
    close(srv);
    return h.median;
}

/* --check-crc's random numbers (splitmix64): replayable from the seed it prints. */
static uint64_t next_random(uint64_t *state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ z >> 30) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ z >> 27) * 0x94d049bb133111ebull;
    return z ^ z >> 31;
}

/* crc32 over n bytes cut into up to four pieces at random points, each piece continuing the last one's CRC. */
static uint32_t crc32_pieces(uint32_t crc, const uint8_t *p, size_t n, uint64_t *rng) {
    size_t at = 0;
    for (int cuts = (int) (next_random(rng) % 4); cuts > 0; cuts--) {
        size_t to = at + next_random(rng) % (n - at + 1);
        crc = crc32(crc, p + at, to - at);
        at = to;
    }
    return crc32(crc, p + at, n - at);
}

typedef unsigned long (*zlib_crc32_fn)(unsigned long, const unsigned char *, unsigned);
static zlib_crc32_fn zlib_crc32; /* the system's zlib, if it loads: an implementation this file did not write */

static uint32_t crc32_zlib(uint32_t crc, const uint8_t *p, size_t n) {
    return (uint32_t) zlib_crc32(crc, p, (unsigned) n);
}

static uint32_t crc32_selected(uint32_t crc, const uint8_t *p, size_t n) {
    return crc32(crc, p, n);
}

/* The median ns of a 2-byte WRITE's ICRC input (the 40-byte pseudo-header, then 20 bytes), each on the last's CRC. */
static double time_icrc(uint32_t (*f)(uint32_t, const uint8_t *, size_t), int clmul) {
    static uint8_t ph[40], rest[20];
    double ns[5];
    crc_clmul = clmul;
    for (int trial = 0; trial < 5; trial++) {
        uint32_t c = 0;
        double t0 = now_ns();
        for (int i = 0; i < 1000000; i++) {
            c = f(f(c, ph, sizeof ph), rest, sizeof rest);
        }
        ns[trial] = (now_ns() - t0) / 1e6 + (c == 0x12345678 ? 1e-9 : 0); /* c used: the loop stays */
    }
    qsort(ns, 5, sizeof ns[0], cmp);
    return ns[2];
}

/*
 * --check-crc [SEED]: the folded CRC against the tables on every length 0..512, 400 times over (205,200 cases), with
 * random contents at random (unaligned) offsets, from random CRCs, in one piece and cut at random points; the first
 * 1026 also against the system's zlib when it loads; then the time of a 2-byte WRITE's ICRC input by each. Exits 1 on
 * a mismatch. Each case's bytes lie in a buffer of their own size, so that an overread shows under AddressSanitizer.
 */
static int check_crc(uint64_t seed) {
    void *zlib = dlopen("libz.so.1", RTLD_NOW);
    zlib_crc32 = zlib != NULL ? (zlib_crc32_fn) dlsym(zlib, "crc32") : NULL;
    int have_clmul = __builtin_cpu_supports("pclmul");
    printf("CRC-32 check, seed 0x%016llx (replay: roce_write_lat --check-crc 0x%016llx)%s\n", (unsigned long long) seed,
           (unsigned long long) seed, have_clmul ? "" : "; no PCLMULQDQ on this CPU: the tables alone");
    uint64_t rng = seed;
    long cases = 0, against_zlib = 0, bad = 0;
    for (int round = 0; round < 400; round++) {
        for (size_t n = 0; n <= 512; n++, cases++) {
            size_t offset = next_random(&rng) % 64;
            uint8_t *buf = malloc(offset + n + 1), *p = buf + offset;
            for (size_t i = 0; i < n; i++) {
                p[i] = (uint8_t) next_random(&rng);
            }
            uint32_t start = next_random(&rng) % 4 == 0 ? 0 : (uint32_t) next_random(&rng);
            crc_clmul = 0;
            uint32_t want = crc32(start, p, n);
            crc_clmul = have_clmul;
            uint32_t whole = crc32(start, p, n), pieces = crc32_pieces(start, p, n, &rng);
            uint32_t zlib_says = want;
            if (zlib_crc32 != NULL && round < 2) {
                zlib_says = crc32_zlib(start, p, n);
                against_zlib++;
            }
            if (whole != want || pieces != want || zlib_says != want) {
                if (bad++ < 10) {
                    fprintf(stderr, "roce_write_lat: CRC mismatch: length %zu offset %zu start %08x: tables %08x,"
                            " folded %08x, folded in pieces %08x, zlib %08x\n", n, offset, start, want, whole, pieces,
                            zlib_says);
                }
            }
            free(buf);
        }
    }
    crc_clmul = have_clmul;
    uint32_t known = crc32(0, (const uint8_t *) "123456789", 9); /* the CRC-32's check value */
    if (known != 0xcbf43926u) {
        fprintf(stderr, "roce_write_lat: CRC-32 of \"123456789\" %08x, not cbf43926\n", known);
        bad++;
    }
    printf("%ld cases (lengths 0..512, offsets 0..63, whole and in pieces), %ld against zlib%s: %ld mismatches\n",
           cases, against_zlib, zlib_crc32 != NULL ? "" : " (libz.so.1 not loaded)", bad);
    printf("a 2-byte WRITE's ICRC input (40 + 20 bytes): tables %.1f ns", time_icrc(crc32_selected, 0));
    if (have_clmul) {
        printf(", folded %.1f ns", time_icrc(crc32_selected, 1));
    }
    if (zlib_crc32 != NULL) {
        printf(", zlib %.1f ns", time_icrc(crc32_zlib, have_clmul));
    }
    printf("\n");
    return bad == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    crc32_init();
    if (argc > 1 && strcmp(argv[1], "--check-crc") == 0) {
        return check_crc(argc > 2 ? strtoull(argv[2], NULL, 0) : (uint64_t) now_ns() ^ (uint64_t) getpid() << 32);
    }
    long iters, warmup;
    int size;
    if (floor_args(argc, argv, &iters, &size, &warmup, 1, MTU) != 0) {
        fprintf(stderr, "usage: roce_write_lat [ITERS>=2 [1<=SIZE<=%d [WARMUP]]]   (ICRCs by PCLMULQDQ;"
                " ROCE_WRITE_LAT_CRC=tables for the eight tables)\n       roce_write_lat --check-crc [SEED]\n", MTU);
        return 2;
    }
    static const uint8_t ones[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    lrh_seed = crc32(0, ones, sizeof ones);
    printf("RDMA WRITE ping-pong in C over UDP 127.0.0.2 <-> 127.0.0.1, %d-byte messages, %ld iterations after %ld"
           " warm-up (half round trip), ICRCs %s:\n", size, iters, warmup,
           crc_clmul ? "by PCLMULQDQ folding" : "by eight tables");
    double plain_mean, roce_mean;
    double plain = run_plain(iters, size, warmup, &plain_mean);
    double roce = run_roce(iters, size, warmup, &roce_mean);
    printf("plain UDP    t_typical %8.2f us   t_avg %8.2f us\n", plain / 1000, plain_mean / 1000);
    printf("RoCE in C    t_typical %8.2f us   t_avg %8.2f us\n", roce / 1000, roce_mean / 1000);
    printf("RoCE in C / plain UDP: t_typical %.2fx   t_avg %.2fx\n", roce / plain, roce_mean / plain_mean);
    printf("RoCE in C, both sides in one thread, datagrams in memory: %.0f ns per round trip\n",
           run_memory(iters * 10, size, warmup * 10));
    return 0;
}
