/**
 * The mlx5 data path: send and receive rings in a QP buffer, completion rings, doorbell records and the bfreg every
 * doorbell goes through. Nothing here allocates after construction, nothing locks except the shared bfreg, and every
 * access to ring memory goes through bounds-checked Agrona buffers and the golden-tested segment writers of
 * {@link io.jhca.mlx5.wqe} and readers of {@link io.jhca.mlx5.cq}, but for the direct queues ({@link DirectSq},
 * {@link DirectCq}), whose slots are indexes masked into a ring they hold the memory of, so that no input reaches
 * an address outside it. Single writer: one thread posts to a queue, one
 * polls a CQ. Facts: rdma-core providers/mlx5 qp.c ({@code _mlx5_post_send}, {@code post_send_db},
 * {@code mlx5_post_recv}), cq.c ({@code mlx5_parse_cqe}, {@code __mlx5_cq_clean}), verbs.c (queue sizing).
 * Byte order: every WQE, CQE and doorbell field is big-endian.
 */
package io.jhca.mlx5.ring;
