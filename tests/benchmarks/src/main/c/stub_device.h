/*
 * The stub device of the C baselines: writes the requester (or responder) CQE of the WQE at wqe_counter as the Java benchmarks'
 * StubDevice does. byte_cnt first, then the CQE's last 8 bytes (sop_drop_qpn, wqe_counter, signature, op_own) as
 * one 8-byte store, op_own within it: a device writes the CQE whole, and one store forwards to a load of any part
 * of it, whichever width the driver reads the fields at. Include after <infiniband/mlx5dv.h> and <endian.h>.
 */
#ifndef JHCA_STUB_DEVICE_H
#define JHCA_STUB_DEVICE_H

/* an 8-byte view of the CQE's last 8 bytes that may alias its narrower fields */
typedef uint64_t __attribute__((may_alias)) stub_u64;

/* byte_cnt, then sop_drop_qpn, wqe_counter, signature 0 and op_own (opcode, owner bit of pi) in one store. */
static inline void stub_write_cqe(struct mlx5_cqe64 *cqe, uint8_t cqe_opcode, uint32_t sop_drop_qpn, uint16_t wqe_counter,
                                  uint32_t byte_cnt, unsigned pi, unsigned entries) {
    uint8_t op_own = cqe_opcode << 4 | ((pi & entries) ? 1 : 0);
    uint64_t tail = (uint64_t) sop_drop_qpn << 32 | (uint64_t) wqe_counter << 16 | op_own;
    cqe->byte_cnt = htobe32(byte_cnt);
    asm volatile("" ::: "memory"); /* body before op_own */
    *(volatile stub_u64 *) &cqe->sop_drop_qpn = htobe64(tail);
}

static inline void stub_complete_request(struct mlx5_cqe64 *cqe, uint16_t wqe_counter, uint8_t send_opcode,
                                         uint32_t qpn, uint32_t byte_cnt, unsigned pi, unsigned entries) {
    stub_write_cqe(cqe, MLX5_CQE_REQ, (uint32_t) send_opcode << 24 | qpn, wqe_counter, byte_cnt, pi, entries);
}

/* A responder CQE (RESP_SEND of byte_cnt bytes into the RQ WQE wqe_counter), as StubDevice.completeRecv writes it. */
static inline void stub_complete_recv(struct mlx5_cqe64 *cqe, uint16_t wqe_counter, uint32_t qpn, uint32_t byte_cnt,
                                      unsigned pi, unsigned entries) {
    stub_write_cqe(cqe, MLX5_CQE_RESP_SEND, qpn, wqe_counter, byte_cnt, pi, entries);
}

/* A responder CQE of a receive into SRQ WQE wqe_counter: srqn_uidx (cqe_ver 0: the SRQ's number), then as above. */
static inline void stub_complete_srq_recv(struct mlx5_cqe64 *cqe, uint16_t wqe_counter, uint32_t qpn, uint32_t srqn,
                                          uint32_t byte_cnt, unsigned pi, unsigned entries) {
    cqe->srqn_uidx = htobe32(srqn);
    stub_write_cqe(cqe, MLX5_CQE_RESP_SEND, qpn, wqe_counter, byte_cnt, pi, entries);
}

#endif
