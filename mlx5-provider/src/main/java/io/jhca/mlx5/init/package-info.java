/**
 * Bringing a ConnectX function up and down: the init segment handshake, the command queue, firmware pages,
 * capabilities, the UAR, the async event queue and the RoCE GID table ({@link io.jhca.mlx5.init.HcaBringUp},
 * {@link io.jhca.mlx5.init.Hca}), in the order of rdma-core's mlx5_vfio.c and the kernel's mlx5_core. Every command
 * failure is a {@link io.jhca.mlx5.cmd.CommandException} naming the command, status and syndrome.
 */
package io.jhca.mlx5.init;
