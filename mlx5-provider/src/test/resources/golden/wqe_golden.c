/*
 * Golden vectors for mlx5 send/receive WQE segments, from the Debian libibverbs-dev mlx5dv.h:
 * the mlx5dv_set_*_seg helpers where the header has one, otherwise the header's structs filled field by
 * field with the byte order the header declares (__be32 etc.), as rdma-core's qp.c fills them.
 * Usage: wqe_golden SEED COUNT   (prints layouts, then COUNT vectors of each kind)
 */
#include <endian.h>
#include <stddef.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "golden_common.h"

static void layouts(void)
{
	SIZE(mlx5_wqe_ctrl_seg);
	LAYOUT(mlx5_wqe_ctrl_seg, opmod_idx_opcode);
	LAYOUT(mlx5_wqe_ctrl_seg, qpn_ds);
	LAYOUT(mlx5_wqe_ctrl_seg, signature);
	LAYOUT(mlx5_wqe_ctrl_seg, dci_stream_channel_id);
	LAYOUT(mlx5_wqe_ctrl_seg, fm_ce_se);
	LAYOUT(mlx5_wqe_ctrl_seg, imm);
	SIZE(mlx5_wqe_data_seg);
	LAYOUT(mlx5_wqe_data_seg, byte_count);
	LAYOUT(mlx5_wqe_data_seg, lkey);
	LAYOUT(mlx5_wqe_data_seg, addr);
	SIZE(mlx5_wqe_raddr_seg);
	LAYOUT(mlx5_wqe_raddr_seg, raddr);
	LAYOUT(mlx5_wqe_raddr_seg, rkey);
	LAYOUT(mlx5_wqe_raddr_seg, reserved);
	SIZE(mlx5_wqe_atomic_seg);
	LAYOUT(mlx5_wqe_atomic_seg, swap_add);
	LAYOUT(mlx5_wqe_atomic_seg, compare);
	SIZE(mlx5_wqe_inl_data_seg);
	LAYOUT(mlx5_wqe_inl_data_seg, byte_count);
	SIZE(mlx5_wqe_datagram_seg);
	SIZE(mlx5_wqe_av);
	LAYOUT(mlx5_wqe_av, key);
	LAYOUT(mlx5_wqe_av, key.qkey.qkey);
	LAYOUT(mlx5_wqe_av, key.dc_key);
	LAYOUT(mlx5_wqe_av, dqp_dct);
	LAYOUT(mlx5_wqe_av, stat_rate_sl);
	LAYOUT(mlx5_wqe_av, fl_mlid);
	LAYOUT(mlx5_wqe_av, rlid);
	LAYOUT(mlx5_wqe_av, reserved0);
	LAYOUT(mlx5_wqe_av, rmac);
	LAYOUT(mlx5_wqe_av, tclass);
	LAYOUT(mlx5_wqe_av, hop_limit);
	LAYOUT(mlx5_wqe_av, grh_gid_fl);
	LAYOUT(mlx5_wqe_av, rgid);
}

static void ctrl(void)
{
	struct mlx5_wqe_ctrl_seg seg;
	uint16_t pi = pick(16);
	uint8_t opcode = pick(8), opmod = pick(8), fm_ce_se = pick(8), sig = pick(8);
	uint8_t ds = pick(6);
	uint32_t qpn = pick(24), imm = pick(32);

	memset(&seg, 0, sizeof(seg));
	mlx5dv_set_ctrl_seg(&seg, pi, opcode, opmod, qpn, fm_ce_se, ds, sig, imm);
	printf("ctrl %x %x %x %x %x %x %x %x", pi, opcode, opmod, qpn, fm_ce_se, ds, sig, imm);
	print_hex(&seg, sizeof(seg));
	putchar('\n');
#if defined(__SSSE3__)
	/* The SSSE3 variant must give the same bytes; print it as its own vector. */
	memset(&seg, 0, sizeof(seg));
	mlx5dv_x86_set_ctrl_seg(&seg, pi, opcode, opmod, qpn, fm_ce_se, ds, sig, imm);
	printf("ctrlx86 %x %x %x %x %x %x %x %x", pi, opcode, opmod, qpn, fm_ce_se, ds, sig, imm);
	print_hex(&seg, sizeof(seg));
	putchar('\n');
#endif
}

static void data(void)
{
	struct mlx5_wqe_data_seg seg;
	uint32_t len = pick(32), lkey = pick(32);
	uint64_t addr = pick(64);

	memset(&seg, 0xa5, sizeof(seg));
	mlx5dv_set_data_seg(&seg, len, lkey, (uintptr_t)addr);
	printf("data %x %x %llx", len, lkey, (unsigned long long)addr);
	print_hex(&seg, sizeof(seg));
	putchar('\n');
}

static void raddr(void)
{
	struct mlx5_wqe_raddr_seg seg;
	uint64_t addr = pick(64);
	uint32_t rkey = pick(32);

	memset(&seg, 0xa5, sizeof(seg));
	seg.raddr = htobe64(addr);
	seg.rkey = htobe32(rkey);
	seg.reserved = 0;
	printf("raddr %llx %x", (unsigned long long)addr, rkey);
	print_hex(&seg, sizeof(seg));
	putchar('\n');
}

static void atomic(void)
{
	struct mlx5_wqe_atomic_seg seg;
	uint64_t swap_add = pick(64), compare = pick(64);

	memset(&seg, 0xa5, sizeof(seg));
	seg.swap_add = htobe64(swap_add);
	seg.compare = htobe64(compare);
	printf("atomic %llx %llx", (unsigned long long)swap_add, (unsigned long long)compare);
	print_hex(&seg, sizeof(seg));
	putchar('\n');
}

static void inl(void)
{
	unsigned char buf[4 + 256];
	struct mlx5_wqe_inl_data_seg *seg = (void *)buf;
	uint32_t len = 1 + below(256 - 4);
	unsigned char payload[256];

	for (uint32_t i = 0; i < len; i++)
		payload[i] = (unsigned char)golden_next();
	seg->byte_count = htobe32(len | MLX5_INLINE_SEG);
	memcpy(seg + 1, payload, len);
	printf("inl %x", len);
	print_hex(payload, len);
	print_hex(buf, sizeof(*seg) + len);
	putchar('\n');
}

static void dgram(void)
{
	struct mlx5_wqe_datagram_seg seg;
	uint64_t key = pick(64);
	uint32_t dqp_dct = pick(24), grh_gid_fl = pick(32);
	uint8_t ext = pick(1), stat_rate_sl = pick(8), fl_mlid = pick(8), tclass = pick(8), hop_limit = pick(8);
	uint16_t rlid = pick(16);
	uint8_t rmac[6], rgid[16];

	for (int i = 0; i < 6; i++)
		rmac[i] = golden_next();
	for (int i = 0; i < 16; i++)
		rgid[i] = golden_next();
	memset(&seg, 0, sizeof(seg));
	mlx5dv_set_dgram_seg(&seg, key, dqp_dct, ext, stat_rate_sl, fl_mlid, rlid, rmac, tclass, hop_limit,
			     grh_gid_fl, rgid);
	printf("dgram %llx %x %x %x %x %x", (unsigned long long)key, dqp_dct, ext, stat_rate_sl, fl_mlid, rlid);
	print_hex(rmac, 6);
	printf(" %x %x %x", tclass, hop_limit, grh_gid_fl);
	print_hex(rgid, 16);
	print_hex(&seg, sizeof(seg));
	putchar('\n');
}

/*
 * A RoCE UD datagram segment the way rdma-core builds one: the address handle's AV as mlx5_create_ah
 * fills it for an Ethernet port (stat_rate_sl = rate << 4 | (sl & 7) << 1, rlid = UDP source port,
 * grh_gid_fl = sgid_index << 20 | flow_label with the GRH bit clear, rmac, tclass, hop_limit, rgid), then
 * _set_datagram_seg: copy the AV, dqp_dct = htobe32(qpn | MLX5_EXTENDED_UD_AV), key.qkey.qkey = htobe32(qkey).
 */
static void udav(void)
{
	struct mlx5_wqe_av av;
	struct mlx5_wqe_datagram_seg seg;
	uint32_t qkey = pick(32), qpn = pick(24), flow_label = pick(20);
	uint8_t rate = pick(4), sl = pick(3), tclass = pick(8), hop_limit = pick(8), sgid_index = pick(8);
	uint16_t sport = pick(16);
	uint8_t rmac[6], rgid[16];

	for (int i = 0; i < 6; i++)
		rmac[i] = golden_next();
	for (int i = 0; i < 16; i++)
		rgid[i] = golden_next();
	memset(&av, 0, sizeof(av));
	av.stat_rate_sl = (rate << 4) | ((sl & 0x7) << 1);
	av.rlid = htobe16(sport);
	av.tclass = tclass;
	av.hop_limit = hop_limit;
	av.grh_gid_fl = htobe32((0u << 30) | ((uint32_t)(sgid_index & 0xff) << 20) | (flow_label & 0xfffff));
	memcpy(av.rgid, rgid, 16);
	memcpy(av.rmac, rmac, 6);

	memset(&seg, 0xa5, sizeof(seg));
	memcpy(&seg.av, &av, sizeof(seg.av));
	seg.av.dqp_dct = htobe32(qpn | MLX5_EXTENDED_UD_AV);
	seg.av.key.qkey.qkey = htobe32(qkey);
	printf("udav %x %x %x %x %x", qkey, qpn, rate, sl, sport);
	print_hex(rmac, 6);
	printf(" %x %x %x %x", tclass, hop_limit, sgid_index, flow_label);
	print_hex(rgid, 16);
	print_hex(&seg, sizeof(seg));
	putchar('\n');
}

static void recv(void)
{
	struct mlx5_wqe_data_seg segs[8];
	uint32_t max_sge = 1 + below(8), used = below(max_sge + 1);
	uint32_t len[8], lkey[8];
	uint64_t addr[8];

	memset(segs, 0, sizeof(segs));
	printf("recv %x %x", used, max_sge);
	for (uint32_t i = 0; i < used; i++) {
		len[i] = pick(32);
		lkey[i] = pick(32);
		addr[i] = pick(64);
		mlx5dv_set_data_seg(&segs[i], len[i], lkey[i], (uintptr_t)addr[i]);
		printf(" %x %x %llx", len[i], lkey[i], (unsigned long long)addr[i]);
	}
	if (used < max_sge)
		mlx5dv_set_data_seg(&segs[used], 0, MLX5_INVALID_LKEY, 0);
	print_hex(segs, max_sge * sizeof(segs[0]));
	putchar('\n');
}

int main(int argc, char **argv)
{
	unsigned long count;

	golden_args(argc, argv, &count);
	layouts();
	for (unsigned long i = 0; i < count; i++) {
		ctrl();
		data();
		raddr();
		atomic();
		inl();
		dgram();
		udav();
		recv();
	}
	return 0;
}
