/**
 * The mlx5 (ConnectX-4 and later) verbs provider: {@link io.jhca.mlx5.Mlx5Provider} lists the functions of every
 * {@link io.jhca.mlx5.spi.Mlx5FunctionSource} and opens them as {@link io.jhca.mlx5.Mlx5Context}s, brought up through
 * the command queue ({@link io.jhca.mlx5.init}); PDs, MRs (MTT mkeys), CQs, RC/UC/UD QPs and AHs are firmware objects
 * made with PRM commands ({@link io.jhca.mlx5.cmd}), whose WQEs and CQEs the provider writes and reads in place
 * ({@link io.jhca.mlx5.ring}). The shapes follow rdma-core's providers/mlx5 and the kernel's mlx5_ib; every device
 * field is big-endian.
 */
package io.jhca.mlx5;
