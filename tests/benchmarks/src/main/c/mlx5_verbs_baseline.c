/*
 * The rdma-core-equivalent C baseline for jhca's mlx5 verbs path (Mlx5VerbsBenchmark): the same operation as
 * mlx5_bare_baseline.c (post BATCH RDMA WRITE WQEs, the last one signaled, one doorbell, a stub device writes the
 * CQE of the last WQE, poll it), but doing per post and per poll what rdma-core's libmlx5 does for an application,
 * written after rdma-core providers/mlx5 (qp.c, cq.c, mlx5.h) and libibverbs (verbs.h):
 *
 *   mode "builder" (ibv_wr_start / ibv_wr_rdma_write / ibv_wr_set_sge / ibv_wr_complete, each an indirect call
 *   through the QP's function table as verbs.h's inline wrappers make it):
 *     wr_start        mirrors qp.c mlx5_send_wr_start: the QP's send lock, roll-back point, nreq = 0;
 *     wr_rdma_write   mirrors qp.c _mlx5_send_wr_rdma + _common_wqe_init_op: mlx5_wq_overflow, wrid[idx] and
 *                     wqe_head[idx] bookkeeping, wr_data[idx], fence cache, fm_ce_se, opmod_idx_opcode, raddr;
 *     wr_set_sge      mirrors qp.c mlx5_send_wr_set_sge_rc_uc: _mlx5_send_wr_set_sge + _common_wqe_finalize
 *                     (qpn_ds, cur_post += DIV_ROUND_UP(cur_size, 4));
 *     wr_complete     mirrors qp.c mlx5_send_wr_complete: post_send_db, then the send lock's release;
 *   mode "post" (ibv_post_send, one indirect call): mirrors qp.c _mlx5_post_send for an RC RDMA WRITE with one SGE
 *     (send lock, per WR: mlx5_wq_overflow, the num_sge check, fence, control segment, set_raddr_seg,
 *     set_data_ptr_seg, wrid / wqe_head, cur_post) and post_send_db;
 *   post_send_db    mirrors qp.c post_send_db: sq.head += nreq, udma_to_device_barrier, doorbell record,
 *                   mmio_wc_start (the bfreg lock when the bfreg is shared: mmio_wc_spinlock), the 8-byte doorbell
 *                   (mmio_write64_be), mmio_flush_writes, bf->offset ^= buf_size, the bfreg unlock if shared;
 *   mode "recv" (the receive side, Mlx5RecvBenchmark: ibv_post_recv of a chain of BATCH one-SGE receives, a
 *   responder CQE for each from the stub device, BATCH polls of one completion):
 *     post_recv     mirrors qp.c mlx5_post_recv: the receive lock, per WR mlx5_wq_overflow and the num_sge check,
 *                   set_data_ptr_seg for each non-empty SGE, the MLX5_INVALID_LKEY terminator when the WQE has room,
 *                   wrid[ind]; then rq.head += nreq, udma_to_device_barrier, the doorbell record (MLX5_RCV_DBR);
 *                   the poll below takes MLX5_CQE_RESP_SEND through get_resp_ctx (the last-QP cache), the srqn
 *                   test of cqe_ver 0 and handle_responder (byte_len, wr_id at rq.tail, ++tail, opcode, slid,
 *                   sl, src_qp, dlid_path_bits, the GRH flag, pkey_index);
 *   mode "srq" (Mlx5RecvBenchmark -p queue=srq: the same receives into a shared receive queue of max_wr 255):
 *     post_srq_recv mirrors srq.c mlx5_post_srq_recv as rdma-core has it since its commit "mlx5: Enhance SRQ
 *                   performance" (2023): the SRQ's lock, per WR the max_gs check; at head == tail the list grows by
 *                   the free WQE after the tail (set_next_tail) or the nearest contiguous run of free WQEs
 *                   (set_next_contig_wqes, get_next_contig_wqes over the free-WQE bitmap), else ENOMEM; wrid[head],
 *                   head := next_wqe_index, the data segments and the terminator; then counter += nreq,
 *                   udma_to_device_barrier, the doorbell record; no ODP wait queue (mlx5_alloc_srq_buf makes one only
 *                   when the device's limits allow twice max_wr + 1 WQEs; it serves page faults only);
 *                   the poll takes the responder CQE through get_cur_rsc with cqe_ver 0 (a non-zero srqn: get_srq_ctx,
 *                   the poll's last-SRQ cache over mlx5_find_srq's two-level table) and handle_responder's SRQ branch
 *                   (wr_id at the CQE's wqe_counter, mlx5_free_srq_wqe: the free bit set under the SRQ's lock, the
 *                   inline-scatter tests). The SRQ's lock is a real spinlock (need_lock = 1): rdma-core gives an SRQ
 *                   on a plain PD a lock unless MLX5_SINGLE_THREADED is set or its PD has a thread domain, and jhca's
 *                   SRQ always locks, since its poster and its CQ's poller may be different threads;
 *   poll            ibv_poll_cq (one indirect call) into cq.c poll_cq: the CQ lock, mlx5_poll_one
 *                   (mlx5_get_next_cqe: get_sw_cqe ownership test, ++cons_index, udma_from_device_barrier;
 *                   mlx5_parse_cqe for MLX5_CQE_REQ: qpn, get_req_context with the poll's last-QP cache
 *                   (cur_rsc) over mlx5_find_qp's two-level table, handle_good_req, wr_id, sq.tail),
 *                   update_cons_index, the CQ unlock.
 * Locks are rdma-core's mlx5_spinlock (mlx5.h mlx5_spin_lock / mlx5_spin_unlock): the QP and CQ are single-threaded
 * (a thread domain / IBV_QP_INIT_ATTR_SEND_OPS_FLAGS with MLX5DV_QP_CREATE_... single-threaded), so need_lock = 0
 * and the lock is the in_use check; the bfreg is the QP's own (a low-latency / dedicated bfreg: need_lock = 0).
 * Memory as in the bare baseline: anonymous pages, no device; only the driver's CPU cost is timed.
 *
 * Usage: mlx5_verbs_baseline builder|post|recv|srq BATCH ITERATIONS -> "mode=%s batch=%d mean=%.2f checksum=%d ns_per_op=%.2f"
 * (the median 1000-operation block's ns per operation). Built with -DJHCA_BASELINE_LIB (no main) into a shared
 * library, verbs_init / verbs_run are called from the JVM (Mlx5PairedRun) to time C and Java blocks alternately.
 */
#define _GNU_SOURCE
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <endian.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "stub_device.h"

#define SQ_WQEBBS 1024u
#define RQ_WQES 256u /* Mlx5RecvBenchmark's maxRecvWr; one SGE a WQE: 16-byte WQEs, no terminator */
#define SRQ_WQES 256u /* Mlx5RecvBenchmark's SRQ: max_wr 255, align_queue_size(255 + 1) WQEs of 32 bytes */
#define SRQ_TABLE_SHIFT 12 /* mlx5.h MLX5_SRQ_TABLE_SHIFT */
#define SRQ_TABLE_MASK ((1 << SRQ_TABLE_SHIFT) - 1)
#define BITS_PER_LONG (8 * sizeof(unsigned long))
#define CQ_ENTRIES 256u
#define QP_TABLE_SHIFT 12 /* mlx5.h MLX5_QP_TABLE_SHIFT */
#define QP_TABLE_MASK ((1 << QP_TABLE_SHIFT) - 1)
#define QP_TABLE_SIZE 256
#define NOINLINE __attribute__((noinline))
#define unlikely(x) __builtin_expect(!!(x), 0)
#define likely(x) __builtin_expect(!!(x), 1)

#define compiler_barrier() asm volatile("" ::: "memory")
#define sfence() asm volatile("sfence" ::: "memory")
#define lfence() asm volatile("lfence" ::: "memory")

struct spinlock { int need_lock; volatile int in_use; };

static inline void spin_lock(struct spinlock *l) {
    if (l->need_lock) { /* never taken here: single-threaded objects */
        while (__sync_lock_test_and_set(&l->in_use, 1)) { }
        return;
    }
    if (unlikely(l->in_use)) { fprintf(stderr, "multithreading violation\n"); abort(); }
    l->in_use = 1;
    __atomic_thread_fence(__ATOMIC_ACQ_REL); /* a compiler barrier on x86, as in mlx5_spin_lock */
}

static inline void spin_unlock(struct spinlock *l) {
    if (l->need_lock) { __sync_lock_release(&l->in_use); return; }
    l->in_use = 0;
}

struct wq {
    uint64_t *wrid; unsigned *wqe_head; unsigned *wr_data;
    unsigned wqe_cnt, max_post, max_gs, head, tail, cur_post;
    struct spinlock lock;
};

struct bf { uint8_t *reg; unsigned offset, buf_size; struct spinlock lock; };

/* mlx5.h struct mlx5_srq, the fields the receive path uses */
struct srq {
    uint8_t *buf; unsigned wqe_shift; uint64_t *wrid; int head, tail, nwqes, max_gs; unsigned counter;
    unsigned long *free_wqe_bitmap; volatile uint32_t *db; struct spinlock lock; uint32_t srqn;
};

struct qp;
struct cq;
struct ops { /* the indirect calls of verbs.h's inline wrappers */
    int (*post_send)(struct qp *, struct ibv_send_wr *, struct ibv_send_wr **);
    void (*wr_start)(struct qp *);
    void (*wr_rdma_write)(struct qp *, uint32_t rkey, uint64_t remote_addr);
    void (*wr_set_sge)(struct qp *, uint32_t lkey, uint64_t addr, uint32_t length);
    int (*wr_complete)(struct qp *);
    int (*poll_cq)(struct cq *, int ne, struct ibv_wc *wc);
    int (*post_recv)(struct qp *, struct ibv_recv_wr *, struct ibv_recv_wr **);
    int (*post_srq_recv)(struct srq *, struct ibv_recv_wr *, struct ibv_recv_wr **);
};

struct qp {
    struct wq sq; uint8_t *sq_start, *qend; volatile uint32_t *db; struct bf *bf; struct cq *send_cq;
    struct wq rq; uint8_t *rq_start; unsigned rq_wqe_shift; struct cq *recv_cq;
    uint32_t qp_num; uint8_t sq_signal_bits, fm_cache, fm_cache_rb;
    struct mlx5_wqe_ctrl_seg *cur_ctrl; void *cur_data; int cur_size, nreq, err, inl_wqe; unsigned cur_post_rb;
    uint64_t wr_id; unsigned wr_flags; /* struct ibv_qp_ex fields */
};

struct ctx {
    struct { int refcnt; struct qp **table; } qp_table[QP_TABLE_SIZE];
    struct { int refcnt; struct srq **table; } srq_table[QP_TABLE_SIZE];
};

struct cq {
    uint8_t *buf; unsigned cqe_mask; unsigned cons_index; volatile uint32_t *dbrec; struct spinlock lock; struct ctx *ctx;
};

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


static inline void *get_send_wqe(struct qp *qp, unsigned n) { return qp->sq_start + (n << 6); }

static inline int wq_overflow(struct wq *wq, int nreq, struct cq *cq) {
    unsigned cur = wq->head - wq->tail;
    if (cur + nreq < wq->max_post) return 0;
    spin_lock(&cq->lock);
    cur = wq->head - wq->tail;
    spin_unlock(&cq->lock);
    return cur + nreq >= wq->max_post;
}

static inline void set_raddr_seg(struct mlx5_wqe_raddr_seg *r, uint64_t remote_addr, uint32_t rkey) {
    r->raddr = htobe64(remote_addr);
    r->rkey = htobe32(rkey);
    r->reserved = 0;
}

static inline void post_send_db(struct qp *qp, struct bf *bf, int nreq, int size, void *ctrl) {
    (void) size;
    if (unlikely(!nreq)) return;
    qp->sq.head += nreq;
    compiler_barrier();                                  /* udma_to_device_barrier */
    qp->db[1] = htobe32(qp->sq.cur_post & 0xffff);       /* MLX5_SND_DBR */
    if (bf->lock.need_lock) spin_lock(&bf->lock);        /* mmio_wc_spinlock: the lock is the fence */
    else sfence();                                       /* mmio_wc_start */
    *(volatile uint64_t *) (bf->reg + bf->offset) = *(uint64_t *) ctrl; /* mmio_write64_be of be bytes */
    sfence();                                            /* mmio_flush_writes */
    bf->offset ^= bf->buf_size;
    if (bf->lock.need_lock) spin_unlock(&bf->lock);
}

/* ---- ibv_post_send: qp.c _mlx5_post_send, RC, no inline ---- */
static NOINLINE int post_send(struct qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr) {
    struct mlx5_wqe_ctrl_seg *ctrl = NULL;
    void *qend = qp->qend;
    int nreq, err = 0, size = 0;
    uint8_t next_fence = qp->fm_cache;
    spin_lock(&qp->sq.lock);
    for (nreq = 0; wr; ++nreq, wr = wr->next) {
        if (unlikely(wr->opcode < 0 || wr->opcode > IBV_WR_DRIVER1)) { err = EINVAL; *bad_wr = wr; goto out; }
        if (unlikely(wq_overflow(&qp->sq, nreq, qp->send_cq))) { err = ENOMEM; *bad_wr = wr; goto out; }
        if (unlikely(wr->num_sge > (int) qp->sq.max_gs)) { err = ENOMEM; *bad_wr = wr; goto out; }
        uint8_t fence = (wr->send_flags & IBV_SEND_FENCE) ? MLX5_WQE_CTRL_FENCE : next_fence;
        next_fence = 0;
        unsigned idx = qp->sq.cur_post & (qp->sq.wqe_cnt - 1);
        uint8_t *seg = get_send_wqe(qp, idx);
        ctrl = (struct mlx5_wqe_ctrl_seg *) seg;
        *(uint32_t *) (seg + 8) = 0;
        ctrl->imm = 0;
        ctrl->fm_ce_se = qp->sq_signal_bits | fence | (wr->send_flags & IBV_SEND_SIGNALED ? MLX5_WQE_CTRL_CQ_UPDATE : 0)
                         | (wr->send_flags & IBV_SEND_SOLICITED ? MLX5_WQE_CTRL_SOLICITED : 0);
        seg += sizeof *ctrl;
        size = sizeof *ctrl / 16;
        qp->sq.wr_data[idx] = 0;
        switch (wr->opcode) {
        case IBV_WR_RDMA_READ: case IBV_WR_RDMA_WRITE: case IBV_WR_RDMA_WRITE_WITH_IMM:
            set_raddr_seg((struct mlx5_wqe_raddr_seg *) seg, wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
            seg += sizeof(struct mlx5_wqe_raddr_seg);
            size += sizeof(struct mlx5_wqe_raddr_seg) / 16;
            break;
        default:
            break;
        }
        struct mlx5_wqe_data_seg *dpseg = (struct mlx5_wqe_data_seg *) seg;
        for (int i = 0; i < wr->num_sge; ++i) {
            if (unlikely((void *) dpseg == qend)) dpseg = get_send_wqe(qp, 0);
            if (likely(wr->sg_list[i].length)) {
                dpseg->byte_count = htobe32(wr->sg_list[i].length);
                dpseg->lkey = htobe32(wr->sg_list[i].lkey);
                dpseg->addr = htobe64(wr->sg_list[i].addr);
                ++dpseg;
                size += sizeof(struct mlx5_wqe_data_seg) / 16;
            }
        }
        ctrl->opmod_idx_opcode = htobe32(((qp->sq.cur_post & 0xffff) << 8) | MLX5_OPCODE_RDMA_WRITE);
        ctrl->qpn_ds = htobe32(size | (qp->qp_num << 8));
        qp->sq.wrid[idx] = wr->wr_id;
        qp->sq.wqe_head[idx] = qp->sq.head + nreq;
        qp->sq.cur_post += (size * 16 + 63) / 64;
    }
out:
    qp->fm_cache = next_fence;
    post_send_db(qp, qp->bf, nreq, size, ctrl);
    spin_unlock(&qp->sq.lock);
    return err;
}

/* ---- ibv_post_recv: qp.c mlx5_post_recv, no WQE signature ---- */
static NOINLINE int post_recv(struct qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr) {
    int nreq, err = 0;
    spin_lock(&qp->rq.lock);
    unsigned ind = qp->rq.head & (qp->rq.wqe_cnt - 1);
    unsigned max_sge = qp->rq.max_gs;
    for (nreq = 0; wr; ++nreq, wr = wr->next) {
        if (unlikely(wq_overflow(&qp->rq, nreq, qp->recv_cq))) { err = ENOMEM; *bad_wr = wr; goto out; }
        if (unlikely(wr->num_sge > (int) max_sge)) { err = EINVAL; *bad_wr = wr; goto out; }
        struct mlx5_wqe_data_seg *scat = (struct mlx5_wqe_data_seg *) (qp->rq_start + (ind << qp->rq_wqe_shift));
        unsigned j = 0;
        for (int i = 0; i < wr->num_sge; ++i) {
            if (unlikely(!wr->sg_list[i].length)) continue;
            scat[j].byte_count = htobe32(wr->sg_list[i].length); /* set_data_ptr_seg */
            scat[j].lkey = htobe32(wr->sg_list[i].lkey);
            scat[j].addr = htobe64(wr->sg_list[i].addr);
            j++;
        }
        if (j < max_sge) {
            scat[j].byte_count = 0;
            scat[j].lkey = htobe32(MLX5_INVALID_LKEY);
            scat[j].addr = 0;
        }
        qp->rq.wrid[ind] = wr->wr_id;
        ind = (ind + 1) & (qp->rq.wqe_cnt - 1);
    }
out:
    if (likely(nreq)) {
        qp->rq.head += nreq;
        compiler_barrier();                              /* udma_to_device_barrier */
        qp->db[0] = htobe32(qp->rq.head & 0xffff);       /* MLX5_RCV_DBR */
    }
    spin_unlock(&qp->rq.lock);
    return err;
}

/* ---- ibv_post_srq_recv: srq.c mlx5_post_srq_recv, util/bitmap.h ---- */
static inline void bit_set(unsigned long *b, unsigned i) { b[i / BITS_PER_LONG] |= 1UL << (i % BITS_PER_LONG); }
static inline void bit_clear(unsigned long *b, unsigned i) { b[i / BITS_PER_LONG] &= ~(1UL << (i % BITS_PER_LONG)); }
static inline int bit_test(const unsigned long *b, unsigned i) { return !!(b[i / BITS_PER_LONG] & (1UL << (i % BITS_PER_LONG))); }

static inline struct mlx5_wqe_srq_next_seg *srq_wqe(struct srq *srq, int n) {
    return (struct mlx5_wqe_srq_next_seg *) (srq->buf + (n << srq->wqe_shift));
}

static inline void set_next_tail(struct srq *srq, int next_tail) {
    srq_wqe(srq, srq->tail)->next_wqe_index = htobe16(next_tail);
    srq->tail = next_tail;
    bit_clear(srq->free_wqe_bitmap, srq->tail);
}

static inline int get_next_contig_wqes(struct srq *srq, int first, int last, int *next_wqe_index) {
    int count = 0, i;
    for (i = first; i < last; i++) {
        if (bit_test(srq->free_wqe_bitmap, i)) count++;
        else if (count > 0) break;
    }
    *next_wqe_index = i - count;
    return count;
}

static NOINLINE int set_next_contig_wqes(struct srq *srq) {
    int next, count = get_next_contig_wqes(srq, srq->head + 1, srq->nwqes, &next);
    if (count == 0) {
        count = get_next_contig_wqes(srq, 0, srq->head, &next);
        if (count == 0) return -1;
    }
    srq_wqe(srq, srq->tail)->next_wqe_index = htobe16(next);
    srq->tail = next + count - 1;
    bit_clear(srq->free_wqe_bitmap, srq->tail);
    for (int i = next; i < srq->tail; i++) { /* the run relinked in index order */
        srq_wqe(srq, i)->next_wqe_index = htobe16(i + 1);
        bit_clear(srq->free_wqe_bitmap, i);
    }
    return 0;
}

static NOINLINE int post_srq_recv(struct srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr) {
    int nreq, err = 0;
    spin_lock(&srq->lock);
    for (nreq = 0; wr; ++nreq, wr = wr->next) {
        if (unlikely(wr->num_sge > srq->max_gs)) { err = EINVAL; *bad_wr = wr; break; }
        if (srq->head == srq->tail) {
            int next_tail = (srq->tail + 1) % srq->nwqes;
            if (bit_test(srq->free_wqe_bitmap, next_tail)) set_next_tail(srq, next_tail);
            else if (set_next_contig_wqes(srq)) { err = ENOMEM; *bad_wr = wr; break; }
        }
        srq->wrid[srq->head] = wr->wr_id;
        struct mlx5_wqe_srq_next_seg *next = srq_wqe(srq, srq->head);
        srq->head = be16toh(next->next_wqe_index);
        struct mlx5_wqe_data_seg *scat = (struct mlx5_wqe_data_seg *) (next + 1);
        int i;
        for (i = 0; i < wr->num_sge; ++i) {
            scat[i].byte_count = htobe32(wr->sg_list[i].length);
            scat[i].lkey = htobe32(wr->sg_list[i].lkey);
            scat[i].addr = htobe64(wr->sg_list[i].addr);
        }
        if (i < srq->max_gs) {
            scat[i].byte_count = 0;
            scat[i].lkey = htobe32(MLX5_INVALID_LKEY);
            scat[i].addr = 0;
        }
    }
    if (nreq) {
        srq->counter += nreq;
        compiler_barrier();                              /* udma_to_device_barrier */
        *srq->db = htobe32(srq->counter);
    }
    spin_unlock(&srq->lock);
    return err;
}

/* srq.c mlx5_free_srq_wqe: a completed WQE is free again; the next post that needs it links it in */
static inline void free_srq_wqe(struct srq *srq, int ind) {
    spin_lock(&srq->lock);
    bit_set(srq->free_wqe_bitmap, ind);
    spin_unlock(&srq->lock);
}

/* ---- the ibv_wr_* builder: qp.c mlx5_send_wr_* ---- */
static NOINLINE void wr_start(struct qp *qp) {
    spin_lock(&qp->sq.lock);
    qp->cur_post_rb = qp->sq.cur_post;
    qp->fm_cache_rb = qp->fm_cache;
    qp->err = 0;
    qp->nreq = 0;
    qp->inl_wqe = 0;
}

static NOINLINE void wr_rdma_write(struct qp *qp, uint32_t rkey, uint64_t remote_addr) {
    /* _common_wqe_init_op */
    if (unlikely(wq_overflow(&qp->sq, qp->nreq, qp->send_cq))) { if (!qp->err) qp->err = ENOMEM; return; }
    unsigned idx = qp->sq.cur_post & (qp->sq.wqe_cnt - 1);
    qp->sq.wrid[idx] = qp->wr_id;
    qp->sq.wqe_head[idx] = qp->sq.head + qp->nreq;
    qp->sq.wr_data[idx] = 0;
    struct mlx5_wqe_ctrl_seg *ctrl = get_send_wqe(qp, idx);
    *(uint32_t *) ((uint8_t *) ctrl + 8) = 0;
    uint8_t fence = (qp->wr_flags & IBV_SEND_FENCE) ? MLX5_WQE_CTRL_FENCE : qp->fm_cache;
    qp->fm_cache = 0;
    ctrl->fm_ce_se = qp->sq_signal_bits | fence | (qp->wr_flags & IBV_SEND_SIGNALED ? MLX5_WQE_CTRL_CQ_UPDATE : 0)
                     | (qp->wr_flags & IBV_SEND_SOLICITED ? MLX5_WQE_CTRL_SOLICITED : 0);
    ctrl->opmod_idx_opcode = htobe32(((qp->sq.cur_post & 0xffff) << 8) | MLX5_OPCODE_RDMA_WRITE);
    qp->cur_ctrl = ctrl;
    /* _mlx5_send_wr_rdma */
    uint8_t *raddr = (uint8_t *) ctrl + sizeof(struct mlx5_wqe_ctrl_seg);
    if (unlikely(raddr == qp->qend)) raddr = get_send_wqe(qp, 0);
    set_raddr_seg((struct mlx5_wqe_raddr_seg *) raddr, remote_addr, rkey);
    qp->cur_data = raddr + sizeof(struct mlx5_wqe_raddr_seg);
    qp->cur_size = (sizeof(struct mlx5_wqe_ctrl_seg) + sizeof(struct mlx5_wqe_raddr_seg)) / 16;
    qp->nreq++;
}

static NOINLINE void wr_set_sge(struct qp *qp, uint32_t lkey, uint64_t addr, uint32_t length) {
    if (likely(length)) { /* _mlx5_send_wr_set_sge */
        struct mlx5_wqe_data_seg *dseg = qp->cur_data;
        dseg->byte_count = htobe32(length);
        dseg->lkey = htobe32(lkey);
        dseg->addr = htobe64(addr);
        qp->cur_size += sizeof(*dseg) / 16;
    }
    /* _common_wqe_finalize */
    qp->cur_ctrl->qpn_ds = htobe32(qp->cur_size | (qp->qp_num << 8));
    qp->sq.cur_post += (qp->cur_size + 3) / 4;
}

static NOINLINE int wr_complete(struct qp *qp) {
    int err = qp->err;
    if (unlikely(err)) {
        qp->sq.cur_post = qp->cur_post_rb;
        qp->fm_cache = qp->fm_cache_rb;
        goto out;
    }
    post_send_db(qp, qp->bf, qp->nreq, qp->cur_size, qp->cur_ctrl);
out:
    spin_unlock(&qp->sq.lock);
    return err;
}

/* ---- ibv_poll_cq: cq.c poll_cq / mlx5_poll_one / mlx5_parse_cqe, 64-byte CQEs, cqe_ver 0 ---- */
static inline struct qp *find_qp(struct ctx *ctx, uint32_t qpn) {
    int tind = qpn >> QP_TABLE_SHIFT;
    if (ctx->qp_table[tind].refcnt) return ctx->qp_table[tind].table[qpn & QP_TABLE_MASK];
    return NULL;
}

static inline struct srq *find_srq(struct ctx *ctx, uint32_t srqn) { /* srq.c mlx5_find_srq */
    int tind = srqn >> SRQ_TABLE_SHIFT;
    if (ctx->srq_table[tind].refcnt) return ctx->srq_table[tind].table[srqn & SRQ_TABLE_MASK];
    return NULL;
}

static inline int poll_one(struct cq *cq, struct qp **cur_rsc, struct srq **cur_srq, struct ibv_wc *wc) {
    unsigned n = cq->cons_index;
    struct mlx5_cqe64 *cqe64 = (struct mlx5_cqe64 *) (cq->buf + ((n & cq->cqe_mask) << 6));
    uint8_t op_own = *(volatile uint8_t *) &cqe64->op_own;
    if (!(likely((op_own >> 4) != MLX5_CQE_INVALID) && !((op_own & MLX5_CQE_OWNER_MASK) ^ !!(n & (cq->cqe_mask + 1)))))
        return 1; /* CQ_EMPTY */
    ++cq->cons_index;
    lfence(); /* udma_from_device_barrier */
    uint32_t qpn = be32toh(cqe64->sop_drop_qpn) & 0xffffff;
    wc->wc_flags = 0;
    wc->qp_num = qpn;
    switch (op_own >> 4) {
    case MLX5_CQE_REQ: {
        if (!*cur_rsc || qpn != (*cur_rsc)->qp_num) *cur_rsc = find_qp(cq->ctx, qpn); /* get_req_context */
        struct qp *mqp = *cur_rsc;
        if (unlikely(!mqp)) return -1; /* CQ_POLL_ERR */
        struct wq *wq = &mqp->sq;
        unsigned idx = be16toh(cqe64->wqe_counter) & (wq->wqe_cnt - 1);
        switch (be32toh(cqe64->sop_drop_qpn) >> 24) { /* handle_good_req */
        case MLX5_OPCODE_RDMA_WRITE_IMM: wc->wc_flags |= IBV_WC_WITH_IMM; /* fall through */
        case MLX5_OPCODE_RDMA_WRITE: wc->opcode = IBV_WC_RDMA_WRITE; break;
        case MLX5_OPCODE_SEND_IMM: wc->wc_flags |= IBV_WC_WITH_IMM; /* fall through */
        case MLX5_OPCODE_SEND: case MLX5_OPCODE_SEND_INVAL: wc->opcode = IBV_WC_SEND; break;
        case MLX5_OPCODE_RDMA_READ: wc->opcode = IBV_WC_RDMA_READ; wc->byte_len = be32toh(cqe64->byte_cnt); break;
        case MLX5_OPCODE_ATOMIC_CS: wc->opcode = IBV_WC_COMP_SWAP; wc->byte_len = 8; break;
        case MLX5_OPCODE_ATOMIC_FA: wc->opcode = IBV_WC_FETCH_ADD; wc->byte_len = 8; break;
        default: break;
        }
        wc->wr_id = wq->wrid[idx];
        wc->status = IBV_WC_SUCCESS;
        wq->tail = wq->wqe_head[idx] + 1;
        return 0;
    }
    case MLX5_CQE_RESP_WR_IMM: case MLX5_CQE_RESP_SEND: case MLX5_CQE_RESP_SEND_IMM: case MLX5_CQE_RESP_SEND_INV: {
        uint32_t srqn = be32toh(cqe64->srqn_uidx) & 0xffffff;         /* get_cur_rsc, cqe_ver 0 */
        if (srqn) {
            if (!*cur_srq || srqn != (*cur_srq)->srqn) {                /* get_srq_ctx */
                *cur_srq = find_srq(cq->ctx, srqn);
                if (unlikely(!*cur_srq)) return -1;
            }
            struct srq *srq = *cur_srq;
            wc->byte_len = be32toh(cqe64->byte_cnt);                   /* handle_responder, SRQ branch */
            uint16_t wqe_ctr = be16toh(cqe64->wqe_counter);
            wc->wr_id = srq->wrid[wqe_ctr];
            free_srq_wqe(srq, wqe_ctr);
            if (unlikely(cqe64->op_own & (MLX5_INLINE_SCATTER_32 | MLX5_INLINE_SCATTER_64))) return -1; /* the stub writes none */
        } else {
            if (!*cur_rsc || qpn != (*cur_rsc)->qp_num) *cur_rsc = find_qp(cq->ctx, qpn); /* get_resp_ctx */
            struct qp *mqp = *cur_rsc;
            if (unlikely(!mqp)) return -1;
            wc->byte_len = be32toh(cqe64->byte_cnt);                   /* handle_responder */
            struct wq *wq = &mqp->rq;
            unsigned wqe_ctr = wq->tail & (wq->wqe_cnt - 1);
            wc->wr_id = wq->wrid[wqe_ctr];
            ++wq->tail;
        }
        switch (op_own >> 4) {
        case MLX5_CQE_RESP_WR_IMM:
            wc->opcode = IBV_WC_RECV_RDMA_WITH_IMM; wc->wc_flags |= IBV_WC_WITH_IMM; wc->imm_data = cqe64->imm_inval_pkey;
            break;
        case MLX5_CQE_RESP_SEND: wc->opcode = IBV_WC_RECV; break;
        case MLX5_CQE_RESP_SEND_IMM:
            wc->opcode = IBV_WC_RECV; wc->wc_flags |= IBV_WC_WITH_IMM; wc->imm_data = cqe64->imm_inval_pkey;
            break;
        case MLX5_CQE_RESP_SEND_INV:
            wc->opcode = IBV_WC_RECV; wc->wc_flags |= IBV_WC_WITH_INV;
            wc->invalidated_rkey = be32toh(cqe64->imm_inval_pkey);
            break;
        }
        wc->slid = be16toh(cqe64->slid);
        wc->sl = (be32toh(cqe64->flags_rqpn) >> 24) & 0xf;
        wc->src_qp = be32toh(cqe64->flags_rqpn) & 0xffffff;
        wc->dlid_path_bits = cqe64->ml_path & 0x7f;
        wc->wc_flags |= ((be32toh(cqe64->flags_rqpn) >> 28) & 3) ? IBV_WC_GRH : 0;
        wc->pkey_index = be32toh(cqe64->imm_inval_pkey) & 0xffff;
        wc->status = IBV_WC_SUCCESS;
        return 0;
    }
    default:
        return -1;
    }
}

static NOINLINE int poll_cq(struct cq *cq, int ne, struct ibv_wc *wc) {
    struct qp *rsc = NULL; /* the last-QP and last-SRQ caches live for one poll call */
    struct srq *srq = NULL;
    int npolled, err = 0;
    spin_lock(&cq->lock);
    for (npolled = 0; npolled < ne; ++npolled) {
        err = poll_one(cq, &rsc, &srq, wc + npolled);
        if (err) break;
    }
    cq->dbrec[0] = htobe32(cq->cons_index & 0xffffff); /* update_cons_index */
    spin_unlock(&cq->lock);
    return err < 0 ? err : npolled;
}

static struct ops OPS = { post_send, wr_start, wr_rdma_write, wr_set_sge, wr_complete, poll_cq, post_recv, post_srq_recv };
static struct ops *volatile ops_ref = &OPS; /* the library's function table: calls stay indirect */

/* The application's state between calls of verbs_run: the device's objects, the WRs, the stub device's index. */
static struct {
    int builder, recv, srq_recv;
    unsigned batch;
    uint8_t *buf;
    struct ctx ctx;
    struct cq cq;
    struct qp qp;
    struct bf bf;
    struct srq srq;
    struct ibv_sge sges[64];
    struct ibv_send_wr wrs[64];
    struct ibv_recv_wr rwrs[64];
    unsigned device_pi;
    uint64_t wr_id, sum;
} V;

/*
 * Sets up a fresh QP and CQ for BATCH WRs per operation: MODE 0 RDMA WRITEs by ibv_post_send, 1 by the builder,
 * 2 one-SGE receives by ibv_post_recv, 3 one-SGE receives by ibv_post_srq_recv into the QP's SRQ.
 */
int verbs_init(int mode, unsigned batch) {
    const int builder = mode == 1;
    const uint32_t qpn = 0x11, lkey = 0x100, rkey = 0x200;
    if (batch < 1 || batch > 64) return -1;
    if (V.buf == NULL) { /* memory mapped once */
        V.buf = pages(4096);
        struct qp **table = calloc(1 << QP_TABLE_SHIFT, sizeof *table);
        table[qpn & QP_TABLE_MASK] = &V.qp;
        V.ctx.qp_table[qpn >> QP_TABLE_SHIFT].refcnt = 1;
        V.ctx.qp_table[qpn >> QP_TABLE_SHIFT].table = table;
        V.cq.buf = pages(CQ_ENTRIES * 64);
        V.cq.dbrec = pages(4096);
        V.bf.reg = (uint8_t *) pages(4096) + 0x800;
        V.qp.sq_start = pages(SQ_WQEBBS * 64);
        V.qp.db = pages(4096);
        V.qp.sq.wrid = calloc(SQ_WQEBBS, sizeof(uint64_t));
        V.qp.sq.wqe_head = calloc(SQ_WQEBBS, sizeof(unsigned));
        V.qp.sq.wr_data = calloc(SQ_WQEBBS, sizeof(unsigned));
        V.qp.rq_start = pages(RQ_WQES * 16);
        V.qp.rq.wrid = calloc(RQ_WQES, sizeof(uint64_t));
        V.srq.buf = pages(SRQ_WQES * 32);
        V.srq.wrid = calloc(SRQ_WQES, sizeof(uint64_t));
        V.srq.free_wqe_bitmap = calloc(SRQ_WQES / BITS_PER_LONG, sizeof(unsigned long));
        V.srq.db = pages(4096);
        V.srq.srqn = 0x21;
        struct srq **stable = calloc(1 << SRQ_TABLE_SHIFT, sizeof *stable);
        stable[V.srq.srqn & SRQ_TABLE_MASK] = &V.srq;
        V.ctx.srq_table[V.srq.srqn >> SRQ_TABLE_SHIFT].refcnt = 1;
        V.ctx.srq_table[V.srq.srqn >> SRQ_TABLE_SHIFT].table = stable;
    }
    V.builder = builder;
    V.recv = mode == 2 || mode == 3;
    V.srq_recv = mode == 3;
    V.batch = batch;
    /* mlx5_alloc_srq_buf without a wait queue: WQEs 0..nwqes-2 linked in order, the last is the tail, none free */
    V.srq.wqe_shift = 5;
    V.srq.max_gs = 1;
    V.srq.nwqes = SRQ_WQES;
    V.srq.head = 0;
    V.srq.tail = SRQ_WQES - 1;
    V.srq.counter = 0;
    V.srq.lock = (struct spinlock) {.need_lock = 1};
    memset(V.srq.free_wqe_bitmap, 0, SRQ_WQES / 8);
    for (unsigned i = 0; i + 1 < SRQ_WQES; i++) srq_wqe(&V.srq, i)->next_wqe_index = htobe16(i + 1);
    V.cq.cqe_mask = CQ_ENTRIES - 1;
    V.cq.cons_index = 0;
    V.cq.ctx = &V.ctx;
    for (unsigned i = 0; i < CQ_ENTRIES; i++) ((struct mlx5_cqe64 *) (V.cq.buf + i * 64))->op_own = MLX5_CQE_INVALID << 4 | 1;
    V.bf.offset = 0;
    V.bf.buf_size = 0x100;
    uint64_t *wrid = V.qp.sq.wrid;
    unsigned *wqe_head = V.qp.sq.wqe_head, *wr_data = V.qp.sq.wr_data;
    uint8_t *sq_start = V.qp.sq_start, *rq_start = V.qp.rq_start;
    uint64_t *rq_wrid = V.qp.rq.wrid;
    volatile uint32_t *db = V.qp.db;
    memset(&V.qp, 0, sizeof V.qp);
    V.qp.rq_start = rq_start;
    V.qp.rq.wrid = rq_wrid;
    V.qp.rq.wqe_cnt = RQ_WQES;
    V.qp.rq.max_post = RQ_WQES;
    V.qp.rq.max_gs = 1;
    V.qp.rq_wqe_shift = 4;
    V.qp.recv_cq = &V.cq;
    V.qp.sq.wrid = wrid;
    V.qp.sq.wqe_head = wqe_head;
    V.qp.sq.wr_data = wr_data;
    V.qp.sq_start = sq_start;
    V.qp.qend = sq_start + SQ_WQEBBS * 64;
    V.qp.db = db;
    V.qp.bf = &V.bf;
    V.qp.send_cq = &V.cq;
    V.qp.qp_num = qpn;
    V.qp.sq.wqe_cnt = SQ_WQEBBS;
    V.qp.sq.max_post = SQ_WQEBBS / 4;
    V.qp.sq.max_gs = 1;
    for (unsigned b = 0; b < batch; b++) {
        V.sges[b] = (struct ibv_sge) {.addr = (uintptr_t) V.buf, .length = 64, .lkey = lkey};
        V.wrs[b] = (struct ibv_send_wr) {.sg_list = &V.sges[b], .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
                                         .send_flags = b + 1 == batch ? IBV_SEND_SIGNALED : 0,
                                         .next = b + 1 < batch ? &V.wrs[b + 1] : NULL};
        V.wrs[b].wr.rdma.remote_addr = (uintptr_t) V.buf + 64;
        V.wrs[b].wr.rdma.rkey = rkey;
        V.rwrs[b] = (struct ibv_recv_wr) {.sg_list = &V.sges[b], .num_sge = 1, .next = b + 1 < batch ? &V.rwrs[b + 1] : NULL};
    }
    V.device_pi = 0;
    V.wr_id = V.sum = 0;
    return 0;
}

/* Runs OPS operations; returns their time in ns (CLOCK_MONOTONIC), or -1 if a post or a poll failed. */
double verbs_run(long ops) {
    const uint32_t qpn = 0x11, lkey = 0x100, rkey = 0x200;
    const int builder = V.builder, recv = V.recv, srq_recv = V.srq_recv;
    struct srq *const srq = &V.srq;
    const unsigned batch = V.batch;
    uint8_t *const buf = V.buf;
    struct qp *const qp = &V.qp;
    struct cq *const cq = &V.cq;
    struct ibv_send_wr *const wrs = V.wrs;
    struct ibv_recv_wr *const rwrs = V.rwrs;
    unsigned device_pi = V.device_pi;
    uint64_t wr_id = V.wr_id, sum = V.sum;
    struct ibv_wc wc;
    double t0 = now_ns();
    for (long op = 0; op < ops; op++) {
        struct ops *o = ops_ref;
        if (recv) { /* Mlx5RecvBenchmark's operation: post the chain, a responder CQE each, poll them one by one */
            struct ibv_recv_wr *bad;
            uint64_t first = wr_id + 1;
            for (unsigned b = 0; b < batch; b++) rwrs[b].wr_id = ++wr_id;
            if (srq_recv) {
                /* completed in order, the k-th receive lands in SRQ WQE k mod SRQ_WQES (the posts check it) */
                if (o->post_srq_recv(srq, &rwrs[0], &bad)) { fprintf(stderr, "post_srq_recv failed\n"); return -1; }
                for (unsigned b = 0; b < batch; b++) {
                    struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *) (cq->buf + ((device_pi & (CQ_ENTRIES - 1)) << 6));
                    stub_complete_srq_recv(cqe, (uint16_t) ((srq->counter - batch + b) & (SRQ_WQES - 1)), qpn,
                                           srq->srqn, 64, device_pi, CQ_ENTRIES);
                    device_pi++;
                }
            } else {
                if (o->post_recv(qp, &rwrs[0], &bad)) { fprintf(stderr, "post_recv failed\n"); return -1; }
                for (unsigned b = 0; b < batch; b++) {
                    struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *) (cq->buf + ((device_pi & (CQ_ENTRIES - 1)) << 6));
                    stub_complete_recv(cqe, (uint16_t) (qp->rq.head - batch + b), qpn, 64, device_pi, CQ_ENTRIES);
                    device_pi++;
                }
            }
            for (unsigned b = 0; b < batch; b++) {
                if (o->poll_cq(cq, 1, &wc) != 1 || wc.wr_id != first + b || wc.byte_len != 64) {
                    fprintf(stderr, "receive completion %u missing or wrong at %u\n", b, cq->cons_index);
                    return -1;
                }
                sum += wc.wr_id;
            }
            continue;
        }
        if (builder) {
            o->wr_start(qp);
            for (unsigned b = 0; b < batch; b++) {
                qp->wr_id = ++wr_id;
                qp->wr_flags = b + 1 == batch ? IBV_SEND_SIGNALED : 0;
                o->wr_rdma_write(qp, rkey, (uintptr_t) buf + 64);
                o->wr_set_sge(qp, lkey, (uintptr_t) buf, 64);
            }
            if (o->wr_complete(qp)) { fprintf(stderr, "wr_complete failed\n"); return -1; }
        } else {
            struct ibv_send_wr *bad;
            for (unsigned b = 0; b < batch; b++) wrs[b].wr_id = ++wr_id;
            if (o->post_send(qp, &wrs[0], &bad)) { fprintf(stderr, "post_send failed\n"); return -1; }
        }
        /* stub device: the CQE of the last WQE, body first, then op_own */
        struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *) (cq->buf + ((device_pi & (CQ_ENTRIES - 1)) << 6));
        stub_complete_request(cqe, (uint16_t) (qp->sq.cur_post - 1), MLX5_OPCODE_RDMA_WRITE, qpn, 64, device_pi,
                              CQ_ENTRIES);
        device_pi++;
        if (o->poll_cq(cq, 1, &wc) != 1) { fprintf(stderr, "no completion at %u\n", cq->cons_index); return -1; }
        sum += wc.wr_id;
    }
    double t1 = now_ns();
    V.device_pi = device_pi;
    V.wr_id = wr_id;
    V.sum = sum;
    return t1 - t0;
}

/* What the loop read back, so that no compiler can drop it. */
uint64_t verbs_checksum(void) {
    return V.sum;
}

#ifndef JHCA_BASELINE_LIB
#include "block_timing.h"

int main(int argc, char **argv) {
    int mode = argc < 2 ? 1 : strcmp(argv[1], "srq") == 0 ? 3 : strcmp(argv[1], "recv") == 0 ? 2
             : strcmp(argv[1], "post") == 0 ? 0 : 1;
    unsigned batch = argc > 2 ? (unsigned) atoi(argv[2]) : 1;
    long iters = argc > 3 ? atol(argv[3]) : 10000000L;
    double median, mean;
    if (verbs_init(mode, batch)) { fprintf(stderr, "batch must be 1..64\n"); return 1; }
    if (time_blocks(verbs_run, iters, &median, &mean)) return 1;
    printf("mode=%s batch=%u mean=%.2f checksum=%llu ns_per_op=%.2f\n", mode == 3 ? "srq" : mode == 2 ? "recv" : mode ? "builder" : "post", batch,
           mean, (unsigned long long) (verbs_checksum() & 0xff), median);
    return 0;
}
#endif
