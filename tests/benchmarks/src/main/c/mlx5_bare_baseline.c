/*
 * The bare C baseline for jhca's mlx5 ring level: the same WQEs, built with rdma-core's mlx5dv.h helpers, written into
 * the same kind of memory and announced with the same doorbell sequence as rdma-core's post_send_db, timed the
 * same way as the Java benchmark (Mlx5RingBenchmark), so the Java/C ratio means something.
 *
 * One operation = post BATCH RDMA WRITE WQEs (ctrl + raddr + one data segment, the last one signaled),
 * ring one doorbell (DBR store, store fence, 8-byte doorbell to the current BlueFlame half, store fence, toggle
 * the half), then the stub device writes the CQE of the last WQE (body, then op_own with the owner bit) and the
 * driver polls it (ownership check, load fence, parse, consumer index + CQ doorbell record).
 * Rings, doorbell record, "UAR" page and CQ are anonymous page-aligned memory: no device, so this measures the
 * CPU cost of the driver, exactly as the Java side does.
 *
 * Usage: mlx5_bare_baseline BATCH ITERATIONS [wrid|rt|wrid-rt]  -> prints "batch=%d mean=%.2f checksum=%d
 * ns_per_op=%.2f" (the median 1000-operation block's ns per operation). Built with -DJHCA_BASELINE_LIB (no main) into
 * a shared library, bare_init / bare_run are called from the JVM (Mlx5PairedRun) to time C and Java blocks alternately.
 *
 * With "wrid" the loop also keeps what a driver must keep to report a completion, as jhca's ring level does:
 * per WQE the wr_id and the WR number it ends (rdma-core qp.c: qp->sq.wrid[idx], qp->sq.wqe_head[idx]), per
 * CQE the wr_id looked up by wqe_counter, the send queue's tail advanced (cq.c handle_good_req,
 * mlx5_parse_cqe) and a struct ibv_wc filled (cleared first, as jhca's WorkCompletion.set does). The plain loop
 * keeps none of it and reads three CQE fields.
 *
 * With "rt" the ring sizes, QPN, lkey and rkey are read from memory when the loop starts, as a driver has them
 * (rdma-core: qp->sq.wqe_cnt, cq->verbs_cq.cq.cqe, qp->ibv_qp->qp_num, the SGE's lkey): the compiler can no longer
 * fold them into the loop's instructions. Otherwise they are compile-time constants, which no driver's ring has.
 * Mlx5BareLoopBenchmark is this loop, line for line, in Java, in the same four modes.
 */
#define _GNU_SOURCE
#include <infiniband/mlx5dv.h>
#include <endian.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "stub_device.h"

#define SQ_WQEBBS 1024u /* power of two, as the Java ring */
#define CQ_ENTRIES 256u

/* rdma-core util/udma_barrier.h on x86-64: udma_to_device_barrier = compiler barrier,
 * mmio_flush_writes / mmio_wc_start = sfence, udma_from_device_barrier = lfence. */
#define compiler_barrier() asm volatile("" ::: "memory")
#define sfence() asm volatile("sfence" ::: "memory")
#define lfence() asm volatile("lfence" ::: "memory")

static void *pages(size_t n) {
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) { perror("mmap"); exit(1); }
    return p;
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The loop's state between calls of bare_run: rings and counters, as a driver keeps them. */
static struct {
    unsigned batch;
    int keep_wrid;
    int runtime;
    unsigned wqe_cnt, cq_entries;
    uint32_t qpn, lkey, rkey;
    uint8_t *sq, *uar, *cq, *buf;
    volatile uint32_t *dbr, *cq_dbr;
    uint32_t cur_post, ci, bf_offset, head, tail;
    uint64_t it, sum;
    uint64_t wrid[SQ_WQEBBS];
    uint32_t wqe_head[SQ_WQEBBS];
} B;

/*
 * Sets the loop up for BATCH WQEs per operation; MODE bit 0: keep wr_ids (the "wrid" mode), bit 1: runtime parameters
 * (the "rt" mode). The memory is mapped once.
 */
int bare_init(unsigned batch, int mode) {
    if (B.sq == NULL) {
        B.sq = pages(SQ_WQEBBS * 64);
        B.dbr = pages(4096);
        B.uar = pages(4096);
        B.cq = pages(CQ_ENTRIES * 64);
        B.cq_dbr = pages(4096);
        B.buf = pages(4096);
    }
    B.batch = batch;
    B.keep_wrid = mode & 1;
    B.runtime = (mode & 2) != 0;
    B.wqe_cnt = SQ_WQEBBS;
    B.cq_entries = CQ_ENTRIES;
    B.qpn = 0x11;
    B.lkey = 0x100;
    B.rkey = 0x200;
    B.cur_post = B.ci = B.head = B.tail = 0;
    B.bf_offset = 0x800;
    B.it = B.sum = 0;
    for (unsigned i = 0; i < CQ_ENTRIES; i++) {
        ((struct mlx5_cqe64 *) (B.cq + i * 64))->op_own = MLX5_CQE_INVALID << 4 | 1; /* rdma-core's initial value */
    }
    return 0;
}

/* The loop, compiled twice: RUNTIME is a literal at both calls, so the constant mode keeps its constants. */
static inline __attribute__((always_inline)) double bare_loop(long ops, const int runtime) {
    const unsigned batch = B.batch;
    const int keep_wrid = B.keep_wrid;
    uint8_t *const sq = B.sq, *const uar = B.uar, *const cq = B.cq, *const buf = B.buf;
    volatile uint32_t *const dbr = B.dbr, *const cq_dbr = B.cq_dbr;
    const unsigned wqe_cnt = runtime ? *(volatile unsigned *) &B.wqe_cnt : SQ_WQEBBS;
    const unsigned cq_entries = runtime ? *(volatile unsigned *) &B.cq_entries : CQ_ENTRIES;
    const uint32_t qpn = runtime ? *(volatile uint32_t *) &B.qpn : 0x11;
    const uint32_t lkey = runtime ? *(volatile uint32_t *) &B.lkey : 0x100;
    const uint32_t rkey = runtime ? *(volatile uint32_t *) &B.rkey : 0x200;
    uint32_t cur_post = B.cur_post, ci = B.ci, bf_offset = B.bf_offset, head = B.head, tail = B.tail;
    uint64_t sum = B.sum, it = B.it;
    struct ibv_wc wc;
    double t0 = now_ns();
    for (long op = 0; op < ops; op++, it++) {
        struct mlx5_wqe_ctrl_seg *ctrl = NULL;
        for (unsigned b = 0; b < batch; b++) {
            uint8_t *wqe = sq + ((cur_post & (wqe_cnt - 1)) << 6);
            ctrl = (struct mlx5_wqe_ctrl_seg *) wqe;
            struct mlx5_wqe_raddr_seg *raddr = (struct mlx5_wqe_raddr_seg *) (wqe + 16);
            struct mlx5_wqe_data_seg *data = (struct mlx5_wqe_data_seg *) (wqe + 32);
            uint8_t fm_ce_se = b + 1 == batch ? MLX5_WQE_CTRL_CQ_UPDATE : 0;
            mlx5dv_set_ctrl_seg(ctrl, (uint16_t) cur_post, MLX5_OPCODE_RDMA_WRITE, 0, qpn, fm_ce_se, 3, 0, 0);
            raddr->raddr = htobe64((uint64_t) (uintptr_t) buf + 64);
            raddr->rkey = htobe32(rkey);
            raddr->reserved = 0;
            mlx5dv_set_data_seg(data, 64, lkey, (uintptr_t) buf);
            if (keep_wrid) {
                B.wrid[cur_post & (wqe_cnt - 1)] = it * batch + b;
                B.wqe_head[cur_post & (wqe_cnt - 1)] = head + b;
            }
            cur_post += 1; /* 3 DS = one WQEBB */
        }
        head += batch;
        /* post_send_db */
        compiler_barrier();
        dbr[1] = htobe32(cur_post & 0xffff);
        sfence();
        *(volatile uint64_t *) (uar + bf_offset) = *(uint64_t *) ctrl;
        sfence();
        bf_offset ^= 0x100;

        /* stub device: the CQE of the last WQE, body first, then op_own */
        struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *) (cq + ((ci & (cq_entries - 1)) << 6));
        stub_complete_request(cqe, (uint16_t) (cur_post - 1), MLX5_OPCODE_RDMA_WRITE, qpn, 64, ci, cq_entries);

        /* driver: poll it (rdma-core get_sw_cqe + parse) */
        struct mlx5_cqe64 *c = (struct mlx5_cqe64 *) (cq + ((ci & (cq_entries - 1)) << 6));
        uint8_t op_own = *(volatile uint8_t *) &c->op_own;
        if ((op_own >> 4) == MLX5_CQE_INVALID || ((op_own & 1) ^ !!(ci & cq_entries))) {
            fprintf(stderr, "CQE not owned by software at ci=%u\n", ci);
            return -1;
        }
        lfence();
        if (keep_wrid) {
            uint16_t idx = be16toh(c->wqe_counter) & (wqe_cnt - 1);
            memset(&wc, 0, sizeof wc);
            wc.wr_id = B.wrid[idx];
            wc.status = IBV_WC_SUCCESS;
            wc.opcode = IBV_WC_RDMA_WRITE;
            wc.qp_num = be32toh(c->sop_drop_qpn) & 0xffffff;
            tail = B.wqe_head[idx] + 1;
            compiler_barrier(); /* the application reads wc */
            sum += wc.wr_id + wc.qp_num + tail;
        } else {
            sum += be16toh(c->wqe_counter) + be32toh(c->byte_cnt) + (be32toh(c->sop_drop_qpn) & 0xffffff);
        }
        ci++;
        cq_dbr[0] = htobe32(ci & 0xffffff);
    }
    double t1 = now_ns();
    B.cur_post = cur_post;
    B.ci = ci;
    B.bf_offset = bf_offset;
    B.head = head;
    B.tail = tail;
    B.sum = sum;
    B.it = it;
    return t1 - t0;
}

/* Runs OPS operations; returns their time in ns (CLOCK_MONOTONIC), or -1 if a CQE was not software's. */
double bare_run(long ops) {
    return B.runtime ? bare_loop(ops, 1) : bare_loop(ops, 0);
}

/* What the loop read back, so that no compiler can drop it. */
uint64_t bare_checksum(void) {
    return B.sum;
}

#ifndef JHCA_BASELINE_LIB
#include "block_timing.h"

int main(int argc, char **argv) {
    unsigned batch = argc > 1 ? (unsigned) atoi(argv[1]) : 1;
    long iters = argc > 2 ? atol(argv[2]) : 10000000L;
    double median, mean;
    const char *mode = argc > 3 ? argv[3] : "";
    bare_init(batch, (strncmp(mode, "wrid", 4) == 0 ? 1 : 0) | (strstr(mode, "rt") != NULL ? 2 : 0));
    if (time_blocks(bare_run, iters, &median, &mean)) return 1;
    printf("batch=%u mean=%.2f checksum=%llu ns_per_op=%.2f\n", batch, mean,
           (unsigned long long) (bare_checksum() & 0xff), median);
    return 0;
}
#endif
