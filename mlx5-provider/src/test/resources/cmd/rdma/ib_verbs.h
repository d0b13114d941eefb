/* jhca golden tests: device.h only needs the size of struct ib_grh (40 bytes, union mlx5_ext_cqe). */
#ifndef JHCA_IB_VERBS_SHIM_H
#define JHCA_IB_VERBS_SHIM_H
struct ib_grh {
	unsigned char raw[40];
};
#endif
