/**
 * The ConnectX (mlx5) command interface, driver side and the reusable device side.
 *
 * <ul>
 *   <li>Layout DSL: {@link io.jhca.mlx5.cmd.Layout}, {@link io.jhca.mlx5.cmd.Field}, {@link io.jhca.mlx5.cmd.Struct}
 *       describe PRM structures bit for bit as the kernel's mlx5_ifc.h does; the command layouts
 *       ({@code HcaLayouts}, {@code CqLayouts}, {@code QpLayouts}...) are checked against that header by golden
 *       tests.</li>
 *   <li>Transport: {@link io.jhca.mlx5.cmd.InitSegment} (BAR0 registers), {@link io.jhca.mlx5.cmd.CmdQueueEntry}
 *       and {@link io.jhca.mlx5.cmd.Mailbox} (the formats), {@link io.jhca.mlx5.cmd.CmdQueue} (post, doorbell,
 *       poll, errors, trace).</li>
 *   <li>Device side: {@link io.jhca.mlx5.cmd.CmdQueueDevice} and {@link io.jhca.mlx5.cmd.DeviceCommand} let a
 *       device model fetch, validate, gather, answer and complete commands with the same format code.</li>
 * </ul>
 * Byte order: every device field is big-endian.
 */
package io.jhca.mlx5.cmd;
