/*
 * Golden vectors of the memory window UMR segments against <infiniband/mlx5dv.h>: the header's structs
 * (mlx5_wqe_umr_ctrl_seg, mlx5_wqe_mkey_context_seg, mlx5_wqe_umr_klm_seg) filled with the values rdma-core's
 * mlx5 provider gives them for a bind of a type 1 or 2 window, an unbind, or a LOCAL_INV (a type 2 "bind" of
 * length 0), with the header's constants. One vector per line:
 *   umr TYPE LENGTH NEWKEY QPN ACCESS ADDR LKEY CTRL MKEY KLM
 * ACCESS is the verbs access mask; the last three are the segments' bytes (KLM "-" when there is none).
 */
#include <endian.h>
#include <stddef.h>
#include <string.h>
#include <infiniband/verbs.h>
#include <infiniband/mlx5dv.h>
#include "golden_common.h"

static void layouts(void)
{
	SIZE(mlx5_wqe_umr_ctrl_seg);
	LAYOUT(mlx5_wqe_umr_ctrl_seg, flags);
	LAYOUT(mlx5_wqe_umr_ctrl_seg, klm_octowords);
	LAYOUT(mlx5_wqe_umr_ctrl_seg, translation_offset);
	LAYOUT(mlx5_wqe_umr_ctrl_seg, mkey_mask);
	SIZE(mlx5_wqe_mkey_context_seg);
	LAYOUT(mlx5_wqe_mkey_context_seg, free);
	LAYOUT(mlx5_wqe_mkey_context_seg, access_flags);
	LAYOUT(mlx5_wqe_mkey_context_seg, qpn_mkey);
	LAYOUT(mlx5_wqe_mkey_context_seg, flags_pd);
	LAYOUT(mlx5_wqe_mkey_context_seg, start_addr);
	LAYOUT(mlx5_wqe_mkey_context_seg, len);
	SIZE(mlx5_wqe_umr_klm_seg);
	LAYOUT(mlx5_wqe_umr_klm_seg, byte_count);
	LAYOUT(mlx5_wqe_umr_klm_seg, mkey);
	LAYOUT(mlx5_wqe_umr_klm_seg, address);
	printf("const UMR %x\n", MLX5_OPCODE_UMR);
	printf("const SEND_INVAL %x\n", MLX5_OPCODE_SEND_INVAL);
}

static void one(void)
{
	int type2 = below(2);
	uint64_t length = below(4) == 0 ? 0 : pick(31) + below(2);	/* 0, or up to 2^31 */
	uint32_t key = (uint32_t)pick(32);
	uint32_t qpn = (uint32_t)pick(24);
	uint32_t access = (uint32_t)golden_next() & (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
						      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	uint64_t addr = pick(64);
	uint32_t lkey = (uint32_t)pick(32);
	struct mlx5_wqe_umr_ctrl_seg ctrl;
	struct mlx5_wqe_mkey_context_seg mkey;
	union {
		struct mlx5_wqe_umr_klm_seg klm;
		uint8_t bytes[64];
	} data;

	memset(&ctrl, 0xa5, sizeof(ctrl));
	ctrl.flags = MLX5_WQE_UMR_CTRL_FLAG_TRNSLATION_OFFSET | MLX5_WQE_UMR_CTRL_FLAG_INLINE;
	ctrl.mkey_mask = htobe64(MLX5_WQE_UMR_CTRL_MKEY_MASK_FREE | MLX5_WQE_UMR_CTRL_MKEY_MASK_MKEY);
	ctrl.translation_offset = 0;
	memset(ctrl.rsvd0, 0, sizeof(ctrl.rsvd0));
	memset(ctrl.rsvd1, 0, sizeof(ctrl.rsvd1));
	if (type2)
		ctrl.mkey_mask |= htobe64(MLX5_WQE_UMR_CTRL_MKEY_MASK_QPN);
	if (length) {
		ctrl.klm_octowords = htobe16(4);	/* get_klm_octo(1): ALIGN(1, 3) / 2 */
		if (type2)
			ctrl.flags |= MLX5_WQE_UMR_CTRL_FLAG_CHECK_FREE;
		ctrl.mkey_mask |= htobe64(MLX5_WQE_UMR_CTRL_MKEY_MASK_LEN | MLX5_WQE_UMR_CTRL_MKEY_MASK_START_ADDR |
					  MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_LOCAL_WRITE |
					  MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_READ |
					  MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_REMOTE_WRITE |
					  MLX5_WQE_UMR_CTRL_MKEY_MASK_ACCESS_ATOMIC);
	} else {
		ctrl.klm_octowords = htobe16(0);
		if (type2)
			ctrl.flags |= MLX5_WQE_UMR_CTRL_FLAG_CHECK_QPN;
	}

	memset(&mkey, 0, sizeof(mkey));
	mkey.qpn_mkey = htobe32((key & 0xff) | ((!type2 || !length) ? 0xffffff00 : qpn << 8));
	if (length) {
		mkey.access_flags = 0;
		mkey.free = 0;
		if (access & IBV_ACCESS_LOCAL_WRITE)
			mkey.access_flags |= MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_LOCAL_WRITE;
		if (access & IBV_ACCESS_REMOTE_WRITE)
			mkey.access_flags |= MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_WRITE;
		if (access & IBV_ACCESS_REMOTE_READ)
			mkey.access_flags |= MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_REMOTE_READ;
		if (access & IBV_ACCESS_REMOTE_ATOMIC)
			mkey.access_flags |= MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_ATOMIC;
		mkey.start_addr = htobe64(addr);
		mkey.len = htobe64(length);
	} else {
		mkey.free = MLX5_WQE_MKEY_CONTEXT_FREE;
	}

	memset(&data, 0xa5, sizeof(data));
	data.klm.byte_count = htobe32((uint32_t)length);
	data.klm.mkey = htobe32(lkey);
	data.klm.address = htobe64(addr);
	memset(&data.klm + 1, 0, sizeof(data) - sizeof(data.klm));

	printf("umr %x %llx %x %x %x %llx %x", type2 ? 2 : 1, (unsigned long long)length, key, qpn, access,
	       (unsigned long long)addr, lkey);
	print_hex(&ctrl, sizeof(ctrl));
	print_hex(&mkey, sizeof(mkey));
	print_hex(&data, length ? sizeof(data) : 0);
	putchar('\n');
}

int main(int argc, char **argv)
{
	unsigned long count;

	golden_args(argc, argv, &count);
	if (count == 0)
		layouts();
	for (unsigned long i = 0; i < count; i++)
		one();
	return 0;
}
