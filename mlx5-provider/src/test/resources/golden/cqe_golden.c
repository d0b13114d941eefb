/*
 * Golden vectors for mlx5 CQEs, from the Debian libibverbs-dev mlx5dv.h: random bytes, then every named
 * field of struct mlx5_cqe64 / struct mlx5_err_cqe set from a printed value with the byte order the header
 * declares; plus the mlx5dv_get_cqe_* helpers' view of op_own.
 * Usage: cqe_golden SEED COUNT
 */
#include <endian.h>
#include <stddef.h>
#include <string.h>
#include <infiniband/mlx5dv.h>

#include "golden_common.h"

static void layouts(void)
{
	SIZE(mlx5_cqe64);
	LAYOUT(mlx5_cqe64, wqe_id);
	LAYOUT(mlx5_cqe64, ml_path);
	LAYOUT(mlx5_cqe64, slid);
	LAYOUT(mlx5_cqe64, flags_rqpn);
	LAYOUT(mlx5_cqe64, hds_ip_ext);
	LAYOUT(mlx5_cqe64, l4_hdr_type_etc);
	LAYOUT(mlx5_cqe64, vlan_info);
	LAYOUT(mlx5_cqe64, srqn_uidx);
	LAYOUT(mlx5_cqe64, imm_inval_pkey);
	LAYOUT(mlx5_cqe64, app);
	LAYOUT(mlx5_cqe64, app_op);
	LAYOUT(mlx5_cqe64, app_info);
	LAYOUT(mlx5_cqe64, byte_cnt);
	LAYOUT(mlx5_cqe64, timestamp);
	LAYOUT(mlx5_cqe64, sop_drop_qpn);
	LAYOUT(mlx5_cqe64, wqe_counter);
	LAYOUT(mlx5_cqe64, signature);
	LAYOUT(mlx5_cqe64, op_own);
	SIZE(mlx5_err_cqe);
	LAYOUT(mlx5_err_cqe, srqn);
	LAYOUT(mlx5_err_cqe, vendor_err_synd);
	LAYOUT(mlx5_err_cqe, syndrome);
	LAYOUT(mlx5_err_cqe, s_wqe_opcode_qpn);
	LAYOUT(mlx5_err_cqe, wqe_counter);
	LAYOUT(mlx5_err_cqe, signature);
	LAYOUT(mlx5_err_cqe, op_own);
}

static void random_fill(void *p, size_t n)
{
	unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)golden_next();
}

static void cqe64(void)
{
	struct mlx5_cqe64 cqe;
	uint16_t wqe_id = pick(16), slid = pick(16), vlan_info = pick(16), app_info = pick(16), wqe_counter = pick(16);
	uint8_t ml_path = pick(8), hds_ip_ext = pick(8), l4 = pick(8), app = pick(8), app_op = pick(8);
	uint8_t signature = pick(8), op_own = pick(8);
	uint32_t flags_rqpn = pick(32), srqn_uidx = pick(32), imm = pick(32), byte_cnt = pick(32), sop_drop_qpn = pick(32);
	uint64_t timestamp = pick(64);

	random_fill(&cqe, sizeof(cqe));
	cqe.wqe_id = htobe16(wqe_id);
	cqe.ml_path = ml_path;
	cqe.slid = htobe16(slid);
	cqe.flags_rqpn = htobe32(flags_rqpn);
	cqe.hds_ip_ext = hds_ip_ext;
	cqe.l4_hdr_type_etc = l4;
	cqe.vlan_info = htobe16(vlan_info);
	cqe.srqn_uidx = htobe32(srqn_uidx);
	cqe.imm_inval_pkey = htobe32(imm);
	cqe.app = app;
	cqe.app_op = app_op;
	cqe.app_info = htobe16(app_info);
	cqe.byte_cnt = htobe32(byte_cnt);
	cqe.timestamp = htobe64(timestamp);
	cqe.sop_drop_qpn = htobe32(sop_drop_qpn);
	cqe.wqe_counter = htobe16(wqe_counter);
	cqe.signature = signature;
	cqe.op_own = op_own;
	printf("cqe64 %x %x %x %x %x %x %x %x %x %x %x %x %x %llx %x %x %x %x", wqe_id, ml_path, slid, flags_rqpn,
	       hds_ip_ext, l4, vlan_info, srqn_uidx, imm, app, app_op, app_info, byte_cnt,
	       (unsigned long long)timestamp, sop_drop_qpn, wqe_counter, signature, op_own);
	printf(" %x %x %x %x", mlx5dv_get_cqe_owner(&cqe), mlx5dv_get_cqe_se(&cqe), mlx5dv_get_cqe_format(&cqe),
	       mlx5dv_get_cqe_opcode(&cqe));
	print_hex(&cqe, sizeof(cqe));
	putchar('\n');
}

static void err_cqe(void)
{
	struct mlx5_err_cqe cqe;
	uint32_t srqn = pick(32), s_wqe_opcode_qpn = pick(32);
	uint8_t vendor = pick(8), syndrome = pick(8), signature = pick(8);
	uint8_t op_own = (uint8_t)(((golden_next() & 1) ? MLX5_CQE_REQ_ERR : MLX5_CQE_RESP_ERR) << 4 | pick(4));
	uint16_t wqe_counter = pick(16);

	random_fill(&cqe, sizeof(cqe));
	cqe.srqn = htobe32(srqn);
	cqe.vendor_err_synd = vendor;
	cqe.syndrome = syndrome;
	cqe.s_wqe_opcode_qpn = htobe32(s_wqe_opcode_qpn);
	cqe.wqe_counter = htobe16(wqe_counter);
	cqe.signature = signature;
	cqe.op_own = op_own;
	printf("errcqe %x %x %x %x %x %x %x", srqn, vendor, syndrome, s_wqe_opcode_qpn, wqe_counter, signature, op_own);
	print_hex(&cqe, sizeof(cqe));
	putchar('\n');
}

int main(int argc, char **argv)
{
	unsigned long count;

	golden_args(argc, argv, &count);
	layouts();
	for (unsigned long i = 0; i < count; i++) {
		cqe64();
		err_cqe();
	}
	return 0;
}
