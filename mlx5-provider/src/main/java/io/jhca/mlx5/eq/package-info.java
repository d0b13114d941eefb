/**
 * Event queue entries: the 64-byte EQE format ({@link io.jhca.mlx5.eq.Eqe}) and the event types
 * ({@link io.jhca.mlx5.eq.EventType}), shared by the driver (which consumes its async EQ) and a device model (which
 * writes it). Offsets from the kernel's device.h {@code struct mlx5_eqe}, checked by a golden test. Byte order: every
 * multi-byte field is big-endian.
 */
package io.jhca.mlx5.eq;
